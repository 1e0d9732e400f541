import { Body, Controller, Get, HttpCode, HttpStatus, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Permission } from '../auth/permission';
import { Principal } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { DeferredFlagWrite } from '../flags/flag-write.interceptor';
import {
  ApplyChangeRequestDto,
  ChangeRequestDto,
  ChangeRequestPageDto,
  ChangeRequestRefusedDto,
  ChangeRequestStaleDto,
  CreateChangeRequestDto,
  CreateReviewDto,
  ListChangeRequestsQueryDto,
  UpdateChangeRequestDto,
} from './dto/change-request.dto';
import { ChangeRequestsService } from './change-requests.service';
import { APPLIED_EXAMPLE, CHANGE_REQUEST_EXAMPLE, CHANGE_REQUEST_PAGE_EXAMPLE } from './dto/change-request.examples';

/** The routes that take bodies up to CHANGE_REQUEST_BODY_LIMIT_BYTES, as the import. */
export const CHANGE_REQUESTS_PATH = '/v1/change-requests';
/** A request's own path (PATCH, which may replace its changes), lower-cased as JsonBodyLimits compares it. */
export const CHANGE_REQUEST_PATH = /^\/v1\/change-requests\/[0-9a-f-]{36}$/;
export const CHANGE_REQUEST_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const FORBIDDEN =
  "The API key (or the session's role) lacks FLAGS_WRITE; with a session: no X-Organization-Id of one of your organizations, or no X-CSRF-Token (CSRF_TOKEN_INVALID); " +
  'CHANGE_REQUEST_FORBIDDEN: the caller may not do this to this request (the message says why)';
const NOT_FOUND = 'CHANGE_REQUEST_NOT_FOUND: no such request in this organization';
const BAD_ID = 'changeRequestId is not a UUID, or the body breaks a rule (the message names the field)';
const EXAMPLE_CHANGES = [
  { key: 'xp-multiplier', after: { name: 'XP multiplier', description: null, type: 'number', value: 2, runtime: 'shared', archived: false } },
];

/**
 * Change requests (decisions.md, "Change requests (turn 5)"). Creating, editing, reviewing and withdrawing change no
 * flag (@DeferredFlagWrite); apply writes through FlagWriter itself, in one transaction with the request's new state.
 */
@ApiTags('change-requests')
@ApiExtraModels(ChangeRequestStaleDto, ChangeRequestRefusedDto)
@Controller('change-requests')
export class ChangeRequestsController {
  constructor(private readonly requests: ChangeRequestsService) {}

  @Post()
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: FORBIDDEN })
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Propose changes to flags, for review',
    description:
      'Each change is a flag key and its whole proposed state (`after`, checked as a create or an import checks it), or `null` to delete the ' +
      "flag. A key with no flag is a create. The request keeps each flag's state and version now (`before`, `version`): reviewers see the " +
      'diff, and the apply is refused if a flag moved on. 1-1,000 changes, each key once; bodies up to 2 MB.',
  })
  @ApiJsonBody(CreateChangeRequestDto, { xp: { summary: 'Double XP for the weekend', value: { title: 'XP weekend', changes: EXAMPLE_CHANGES } } })
  @ApiCreatedResponse({ type: ChangeRequestDto, example: CHANGE_REQUEST_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A malformed body: the message names the field (a change by index and key)' })
  @ApiPayloadTooLargeResponse({ type: ApiErrorDto, description: 'The body is larger than 2 MB' })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateChangeRequestDto): Promise<ChangeRequestDto> {
    return this.requests.create(principal, dto);
  }

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: "The organization's change requests, newest first",
    description: '`state` filters by state; `awaitingMe=true` gives the open requests the signed-in member may review and has not yet.',
  })
  @ApiOkResponse({ type: ChangeRequestPageDto, example: CHANGE_REQUEST_PAGE_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A bad page, limit, state or awaitingMe' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListChangeRequestsQueryDto): Promise<ChangeRequestPageDto> {
    return this.requests.list(principal, query);
  }

  @Get(':changeRequestId')
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'A change request',
    description:
      "Its changes (each flag's state when the request was made or last edited, and the proposed one: the diff to review), the reviews " +
      'of its current version, the approvals it needs, and its timeline (opened, edited, approved, declined, applied, withdrawn, failed).',
  })
  @ApiOkResponse({ type: ChangeRequestDto, example: CHANGE_REQUEST_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'changeRequestId is not a UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  get(@CurrentPrincipal() principal: Principal, @UuidParam('changeRequestId') id: string): Promise<ChangeRequestDto> {
    return this.requests.get(principal.organizationId, id);
  }

  @Patch(':changeRequestId')
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: FORBIDDEN })
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Edit an open or approved request (its author): replaces what is sent, clears the approvals',
    description:
      "`changes`, when sent, replaces every change, each flag's `before` and version read again (refreshing a stale request). " +
      'The request is open again and the edit is in its timeline.',
  })
  @ApiJsonBody(UpdateChangeRequestDto, { retitle: { summary: 'A clearer title', value: { title: 'XP weekend: multiplier 2 (not 20)' } } })
  @ApiOkResponse({ type: ChangeRequestDto, example: CHANGE_REQUEST_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'CHANGE_REQUEST_NOT_PENDING: the request is applied, declined, withdrawn or failed' })
  @ApiPayloadTooLargeResponse({ type: ApiErrorDto, description: 'The body is larger than 2 MB' })
  update(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('changeRequestId') id: string,
    @Body() dto: UpdateChangeRequestDto,
  ): Promise<ChangeRequestDto> {
    return this.requests.update(principal, id, dto);
  }

  @Post(':changeRequestId/reviews')
  @HttpCode(HttpStatus.CREATED)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: FORBIDDEN + ' (API keys never review; the author only with selfApproval)' })
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Approve or decline (a member other than the author, once per version of the request)',
    description: 'Enough approvals (the review setting) make the request approved; any decline declines it.',
  })
  @ApiJsonBody(CreateReviewDto, { approve: { summary: 'Looks right', value: { decision: 'approve', comment: '2, not 20: good' } } })
  @ApiCreatedResponse({ type: ChangeRequestDto, example: CHANGE_REQUEST_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  @ApiConflictResponse({
    type: ApiErrorDto,
    description: 'CHANGE_REQUEST_NOT_PENDING: the request is closed; CHANGE_REQUEST_ALREADY_REVIEWED: you reviewed this version already',
  })
  review(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('changeRequestId') id: string,
    @Body() dto: CreateReviewDto,
  ): Promise<ChangeRequestDto> {
    return this.requests.review(principal, id, dto);
  }

  @Post(':changeRequestId/withdraw')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: FORBIDDEN })
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Withdraw an open or approved request (its author)',
    description: 'The request stays readable, withdrawn, with the withdrawal in its timeline; nothing about the flags changes.',
  })
  @ApiOkResponse({ type: ChangeRequestDto, example: CHANGE_REQUEST_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'changeRequestId is not a UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'CHANGE_REQUEST_NOT_PENDING: the request is closed' })
  withdraw(@CurrentPrincipal() principal: Principal, @UuidParam('changeRequestId') id: string): Promise<ChangeRequestDto> {
    return this.requests.withdraw(principal, id);
  }

  @Post(':changeRequestId/apply')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: FORBIDDEN + ' (an override: only an admin, signed in)' })
  // Writes through FlagWriter itself (not the audited-route interceptor), with the request's state in the same transaction.
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Apply an approved request: every change in one transaction, audited',
    description:
      'By its author or any editor. Each audit entry is by the caller, with `context: {changeRequestId}`. Nothing is written when a flag ' +
      "changed since the request was made (409 CHANGE_REQUEST_STALE, the fields that differ) or the organization's rules refuse a change " +
      "(409 CHANGE_REQUEST_REFUSED, the import's report). `override: {reason}` (an admin): applies an open or approved request without " +
      'its approvals; the reason is in every audit entry (`context.override.reason`) and the timeline.',
  })
  @ApiJsonBody(
    ApplyChangeRequestDto,
    {
      approved: { summary: 'Apply an approved request', value: {} },
      override: { summary: 'At 3 a.m., without the approvals (an admin)', value: { override: { reason: 'XP multiplier at 20 in production' } } },
    },
    { required: false },
  )
  @ApiOkResponse({ type: ChangeRequestDto, example: APPLIED_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  @ApiConflictResponse({
    description:
      'CHANGE_REQUEST_NOT_APPROVED / CHANGE_REQUEST_NOT_PENDING: not in a state to apply; CHANGE_REQUEST_STALE: a flag moved on (`stale`); ' +
      "CHANGE_REQUEST_REFUSED: the organization's rules refuse a change (the import's report). Nothing was written.",
    schema: {
      anyOf: [{ $ref: getSchemaPath(ChangeRequestStaleDto) }, { $ref: getSchemaPath(ChangeRequestRefusedDto) }, { $ref: getSchemaPath(ApiErrorDto) }],
    },
  })
  apply(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('changeRequestId') id: string,
    @Body() dto: ApplyChangeRequestDto,
  ): Promise<ChangeRequestDto> {
    return this.requests.apply(principal, id, dto ?? {});
  }
}
