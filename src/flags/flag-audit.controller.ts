import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../organizations/permission';
import { AuditPageDto, AuditQueryDto } from './dto/flag-audit.dto';
import { FlagsService } from './flags.service';

@ApiTags('flags')
@Controller('flags/audit')
// The class name is the OpenAPI operationId prefix (AuditController_list): generated clients depend on it.
export class AuditController {
  constructor(private readonly flags: FlagsService) {}

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({ summary: 'The append-only log of flag changes, newest first' })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Bad page, limit or flagId' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: AuditQueryDto): Promise<AuditPageDto> {
    return this.flags.history(principal.organizationId, query);
  }
}
