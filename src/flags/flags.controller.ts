import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../auth/permission';
import { CreateFlagDto, RestoreFlagDto, UpdateFlagDto } from './dto/flag-input.dto';
import { FeatureFlagDto, FlagPageDto, ListFlagsQueryDto } from './dto/flag.dto';
import { FlagWriteRun } from './flag-writer';
import { AuditedFlagWrite } from './flag-write.interceptor';
import { FlagsService } from './flags.service';

@ApiTags('flags')
@Controller('flags')
export class FlagsController {
  constructor(private readonly flags: FlagsService) {}

  @Post()
  @RequirePermission(Permission.FLAGS_WRITE)
  @AuditedFlagWrite()
  @ApiOperation({ summary: 'Create a flag; it is published to servers at once' })
  @ApiCreatedResponse({ type: FeatureFlagDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Validation failed: bad key, value not matching type, ...' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'Key already taken, or the organization is at its allowance' })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateFlagDto): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.create(tx, principal.organizationId, dto);
  }

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({ summary: 'List flags, newest first, with the quota' })
  @ApiOkResponse({ type: FlagPageDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Bad page, limit, search or includeArchived' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListFlagsQueryDto): Promise<FlagPageDto> {
    return this.flags.list(principal.organizationId, query);
  }

  @Get(':flagId')
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({ summary: 'Read one flag' })
  @ApiOkResponse({ type: FeatureFlagDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a valid UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string): Promise<FeatureFlagDto> {
    return this.flags.get(principal.organizationId, flagId);
  }

  @Patch(':flagId')
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: 'The key lacks FLAGS_WRITE, or the flag is locked' })
  @AuditedFlagWrite()
  @ApiOperation({ summary: 'Change a flag: send only what changes; the key is immutable' })
  @ApiOkResponse({ type: FeatureFlagDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Validation failed, or type and value not sent together' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'Value change of an archived flag' })
  update(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string, @Body() dto: UpdateFlagDto): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.update(tx, principal.organizationId, flagId, dto);
  }

  @Post(':flagId/restore')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: 'The key lacks FLAGS_WRITE, or the flag is locked' })
  @AuditedFlagWrite()
  @ApiOperation({
    summary: "Restore a flag to an audit entry's `after` state (name, description, type, value, runtime, archived)",
    description:
      'An ordinary edit by the calling key: the rules and audit labels of PATCH apply, and restoring the current state ' +
      'writes nothing. The entry must be one of this flag whose `after` is not null (not a deletion).',
  })
  @ApiOkResponse({ type: FeatureFlagDto, description: 'The flag as restored' })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description: 'flagId or auditEntryId is not a UUID; AUDIT_ENTRY_NOT_RESTORABLE: the entry is not one of this flag with an after state',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'The flag is archived and would stay archived with another value' })
  restore(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string, @Body() dto: RestoreFlagDto): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.restore(tx, principal.organizationId, flagId, dto.auditEntryId);
  }

  @Delete(':flagId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequirePermission(Permission.FLAGS_WRITE)
  @AuditedFlagWrite()
  @ApiOperation({ summary: 'Delete a flag permanently (allowed even when locked); its audit history stays' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a valid UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string): FlagWriteRun<void> {
    return (tx) => this.flags.delete(tx, principal.organizationId, flagId);
  }
}
