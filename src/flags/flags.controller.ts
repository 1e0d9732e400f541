import { applyDecorators, Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post, Query, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../auth/permission';
import { CreateFlagDto, RestoreFlagDto, UpdateFlagDto } from './dto/flag-input.dto';
import { EvaluateFlagDto, FlagEvaluationDto } from './dto/flag-evaluation.dto';
import { RULES_EXAMPLE } from './dto/flag-rules.dto';
import { FeatureFlagDto, FlagPageDto, ListFlagsQueryDto } from './dto/flag.dto';
import { AUDIT_PAGE_EXAMPLE, FLAG_EXAMPLE, FLAG_PAGE_EXAMPLE } from './dto/flag.examples';
import { FlagWriteRun } from './flag-writer';
import { AuditedFlagWrite } from './flag-write.interceptor';
import { FlagsService } from './flags.service';
import { FlagETagInterceptor, IfMatch, IfMatchHeader, Versioned } from './flag-version';

/** The ETag of an answer showing one flag: its row version. */
const FLAG_ETAG_HEADER = {
  ETag: {
    description:
      'The flag\'s version, strong and quoted ("3"): one more after every change. Send it as If-Match to change the flag only if nobody has since.',
    schema: { type: 'string', example: '"3"' },
  },
};

/** `If-Match` on a write of one flag, and the 412 it may answer (decisions.md, "A flag's version"). */
function FlagPrecondition() {
  return applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        'The ETag of the flag as the caller last read it (GET or PATCH answer), or `*`: the write happens only if the flag is still at ' +
        'that version, else 412 FLAG_CHANGED and nothing is written. Without it, the write happens whatever changed since. Weak tags ' +
        '(W/"3") never match; a header not of the form `*` or `"tag", …` is a 400 naming If-Match.',
      schema: { type: 'string', example: '"3"' },
    }),
    ApiPreconditionFailedResponse({
      type: ApiErrorDto,
      description: 'FLAG_CHANGED: If-Match named a version the flag is no longer at (someone changed it since); nothing was written',
    }),
  );
}

@ApiTags('flags')
@Controller('flags')
export class FlagsController {
  constructor(private readonly flags: FlagsService) {}

  @Post()
  @RequirePermission(Permission.FLAGS_WRITE, { reviewGuarded: true })
  @AuditedFlagWrite()
  @ApiOperation({
    summary: 'Create a flag; it is published to servers at once',
    description:
      'The key is the name servers read the flag by: immutable and unique in the organization (an archived flag keeps it). ' +
      'The value must match the type (at most 4 KB, 4 levels deep). `rules` (optional, at most 20) choose another value by the ' +
      "evaluation context: the first rule whose conditions all hold gives its value, each of the flag's type. " +
      '`shared` flags (the default) may be relayed to players; ' +
      'create anything secret as `server`. An organization may have 5 flags, or 50 with an active subscription, unless the operator set other allowances (GET /v1/flags/quota). ' +
      'Audited as `flag.create`; servers see it on their next poll or stream event.',
  })
  @ApiJsonBody(CreateFlagDto, {
    boolean: {
      summary: 'A boolean event switch',
      value: {
        key: 'double-xp-weekend',
        name: 'Double XP weekend',
        description: 'Doubles XP from matches while the event runs',
        type: 'boolean',
        value: false,
      },
    },
    json: {
      summary: 'A server-only JSON table',
      value: { key: 'loot-table', name: 'Loot table', type: 'json', value: { common: 0.7, rare: 0.25, legendary: 0.05 }, runtime: 'server' },
    },
    targeted: {
      summary: 'Off by default; on for European servers and a 10 % canary of builds from 1.4',
      value: { key: 'new-matchmaker', name: 'New matchmaker', type: 'boolean', value: false, rules: RULES_EXAMPLE },
    },
  })
  @ApiCreatedResponse({
    type: FeatureFlagDto,
    example: { ...FLAG_EXAMPLE, value: false, updatedAt: FLAG_EXAMPLE.createdAt },
    headers: FLAG_ETAG_HEADER,
  })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Validation failed: bad key, value not matching type, ...' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'Key already taken, or the organization is at its allowance' })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateFlagDto): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.create(tx, principal.organizationId, dto);
  }

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'List flags, newest first, with the quota',
    description:
      'Pages of 1-100 flags (20 by default) for management tooling; servers read GET /v1/flags/config instead. `search` keeps flags ' +
      'whose key or name contains it, ignoring case (`%` and `_` match themselves); archived flags are left out unless ' +
      '`includeArchived` is true. `quota` is GET /v1/flags/quota.',
  })
  @ApiOkResponse({ type: FlagPageDto, example: FLAG_PAGE_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Bad page, limit, search or includeArchived' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListFlagsQueryDto): Promise<FlagPageDto> {
    return this.flags.list(principal.organizationId, query);
  }

  @Get(':flagId')
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'Read one flag',
    description:
      'The management view, archived or not, with `locked` telling whether it is beyond the allowance (then it serves but cannot be edited).',
  })
  @UseInterceptors(FlagETagInterceptor)
  @ApiOkResponse({ type: FeatureFlagDto, example: FLAG_EXAMPLE, headers: FLAG_ETAG_HEADER })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a valid UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string): Promise<Versioned<FeatureFlagDto>> {
    return this.flags.read(principal.organizationId, flagId);
  }

  @Patch(':flagId')
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: 'The key lacks FLAGS_WRITE, or the flag is locked', reviewGuarded: true })
  @AuditedFlagWrite()
  @ApiOperation({
    summary: 'Change a flag: send only what changes; the key is immutable',
    description:
      '`type` and `value` go together; `description: null` clears it; `archived: true` takes the flag out of the config payload ' +
      '(its value and rules cannot change while archived). `rules` replaces the whole list (`[]` removes them); a type change on ' +
      'a flag with rules must send rules of the new type. A locked flag may only be archived, unarchived or deleted. One audit ' +
      'entry per call, labelled by the most significant change (runtime > value and rules > archive state > name and ' +
      "description); a call that changes nothing writes none. The answer carries the flag's ETag; send it back as If-Match so that " +
      'a change somebody made meanwhile is never overwritten silently (412).',
  })
  @FlagPrecondition()
  @ApiJsonBody(UpdateFlagDto, {
    value: { summary: 'Turn the event on', value: { type: 'boolean', value: true } },
    archive: { summary: 'Archive it once the event is over', value: { archived: true } },
    rename: { summary: 'Rename it and clear the description', value: { name: 'Double XP (weekend)', description: null } },
    rollout: {
      summary: 'Roll it out to 10 % of servers',
      value: { rules: [{ id: 'canary', conditions: [{ attribute: 'serverId', operator: 'percentage', values: [0, 10] }], value: true }] },
    },
    noRules: { summary: 'Remove every rule: everyone gets value', value: { rules: [] } },
  })
  @ApiOkResponse({ type: FeatureFlagDto, example: FLAG_EXAMPLE, headers: FLAG_ETAG_HEADER })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description:
      'Validation failed (the message names the field, such as rules[0].conditions[1].values), type and value not sent together, or a malformed If-Match',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'Value or rules change of an archived flag' })
  update(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('flagId') flagId: string,
    @Body() dto: UpdateFlagDto,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
  ): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.update(tx, principal.organizationId, flagId, dto, ifMatch);
  }

  @Post(':flagId/restore')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: 'The key lacks FLAGS_WRITE, or the flag is locked', reviewGuarded: true })
  @AuditedFlagWrite()
  @ApiOperation({
    summary: "Restore a flag to an audit entry's `after` state (name, description, type, value, runtime, archived, rules)",
    description:
      'An edit by the calling key: the rules, audit labels and If-Match of PATCH apply, and restoring the current state ' +
      'writes nothing; the audit entry it writes says so (`context: {restoredFrom: <auditEntryId>}`). The entry must be one of ' +
      "this flag whose `after` is not null (not a deletion); an entry without rules removes the flag's rules.",
  })
  @FlagPrecondition()
  @ApiJsonBody(RestoreFlagDto, {
    entry: { summary: "Back to an audit entry's after state", value: { auditEntryId: AUDIT_PAGE_EXAMPLE.results[1].id } },
  })
  @ApiOkResponse({ type: FeatureFlagDto, description: 'The flag as restored', example: { ...FLAG_EXAMPLE, value: false }, headers: FLAG_ETAG_HEADER })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description:
      'flagId or auditEntryId is not a UUID, or If-Match is malformed; AUDIT_ENTRY_NOT_RESTORABLE: the entry is not one of this flag with an after state',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'The flag is archived and would stay archived with another value' })
  restore(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('flagId') flagId: string,
    @Body() dto: RestoreFlagDto,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
  ): FlagWriteRun<FeatureFlagDto> {
    return (tx) => this.flags.restore(tx, principal.organizationId, flagId, dto.auditEntryId, ifMatch);
  }

  @Post(':flagId/evaluate')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'What a flag gives for a context: the preview of the console and support tools',
    description:
      'The flag as stored (archived or not) through the evaluator OFREP and the SDK use: the first rule whose conditions all hold ' +
      'gives its value (reason TARGETING_MATCH, or SPLIT when the rule has a percentage condition; variant the rule id); none ' +
      'holding, the flag value (DEFAULT, variant `default`); a flag without rules gives its value (STATIC).',
  })
  @ApiJsonBody(EvaluateFlagDto, {
    server: { summary: 'A game server', value: { context: { serverId: 'eu-west-17', region: 'eu-west', build: '1.4.2' } } },
    player: { summary: 'A player on that server', value: { context: { targetingKey: 'player-8812', region: 'eu-west', build: '1.4.2' } } },
  })
  @ApiOkResponse({ type: FlagEvaluationDto, example: { value: true, reason: 'SPLIT', variant: 'canary' } })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a valid UUID, or context is not a JSON object' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  evaluate(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string, @Body() dto: EvaluateFlagDto): Promise<FlagEvaluationDto> {
    return this.flags.evaluate(principal.organizationId, flagId, dto.context);
  }

  @Delete(':flagId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequirePermission(Permission.FLAGS_WRITE, { reviewGuarded: true })
  @AuditedFlagWrite()
  @ApiOperation({
    summary: 'Delete a flag permanently (allowed even when locked); its audit history stays',
    description:
      'The flag leaves the config payload and frees its key and its place in the allowance. Audited as `flag.delete` (after: null); ' +
      'its earlier entries keep `flagKey` and get `flagId: null`, and its pending schedules become `failed`. To keep it, archive it instead.',
  })
  @FlagPrecondition()
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a valid UUID, or If-Match is malformed' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  delete(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('flagId') flagId: string,
    @IfMatchHeader() ifMatch: IfMatch | undefined,
  ): FlagWriteRun<void> {
    return (tx) => this.flags.delete(tx, principal.organizationId, flagId, ifMatch);
  }
}
