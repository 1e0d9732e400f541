import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { Permission } from '../auth/permission';
import { Sql } from '../database/sql';
import { FeatureFlagQuotaDto } from './dto/quota.dto';
import { QUOTA_EXAMPLE } from './dto/quota.examples';
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
  @ApiOperation({
    summary: "The organization's flag allowance and usage",
    description:
      "`max` is 5, or 50 while the organization has any active subscription (the deployment's FLAGS_ALLOWED_FREE and " +
      'FLAGS_ALLOWED_SUBSCRIBED when configured), or the allowance the operator gave this organization, whatever its subscriptions. ' +
      '`used` counts every flag, archived ones included. Flags beyond `max` (the newest, by creation time) are `locked`: they keep ' +
      'serving their values, but only archiving and deleting them is allowed until the organization subscribes again (or the ' +
      'operator raises its allowance) or removes flags. At `max`, creating a flag answers 409.',
  })
  @ApiOkResponse({ type: FeatureFlagQuotaDto, example: QUOTA_EXAMPLE })
  getQuota(@CurrentPrincipal() principal: Principal): Promise<FeatureFlagQuotaDto> {
    return this.quota.quotaFor(this.sql, principal.organizationId);
  }
}
