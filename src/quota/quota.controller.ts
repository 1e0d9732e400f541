import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { Permission } from '../auth/permission';
import { Sql } from '../database/sql';
import { FeatureFlagQuotaDto } from './dto/quota.dto';
import { QuotaService } from './quota.service';

@ApiTags('flags')
@Controller('flags/quota')
export class QuotaController {
  constructor(
    private readonly sql: Sql,
    private readonly quota: QuotaService,
  ) {}

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({ summary: "The organization's flag allowance and usage" })
  @ApiOkResponse({ type: FeatureFlagQuotaDto })
  getQuota(@CurrentPrincipal() principal: Principal): Promise<FeatureFlagQuotaDto> {
    return this.quota.quotaFor(this.sql, principal.organizationId);
  }
}
