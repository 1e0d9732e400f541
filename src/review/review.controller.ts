import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, MemberRoute } from '../auth/auth.decorators';
import { SessionPrincipal } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ReviewHistoryPageDto, ReviewHistoryQueryDto, ReviewSettingDto } from './dto/review-setting.dto';
import { ReviewEvents } from './review-events';
import { ReviewService } from './review.service';

const ANY_MEMBER = { forbidden: 'An API key (the setting is managed by people), or no X-Organization-Id of one of your organizations' };
const ADMINS = { forbidden: 'Not an admin of the organization, an API key, no X-Organization-Id of one of yours, or CSRF_TOKEN_INVALID' };

const SETTING_EXAMPLE: ReviewSettingDto = { required: true, approvals: 1, selfApproval: false };
const HISTORY_EXAMPLE: ReviewHistoryPageDto = {
  results: [
    {
      id: '0b5c3f5e-8d1a-4c1e-9f57-3c2b6f0e2a41',
      user: { id: '5f0c1b9e-2a7d-4e8b-b1c3-7d9e0a4f6b21', name: 'Maya' },
      at: '2026-11-29T03:12:00.000Z',
      before: { required: false, approvals: 1, selfApproval: false },
      after: SETTING_EXAMPLE,
    },
  ],
  total: 1,
  page: 1,
  totalPages: 1,
};

/**
 * The organization's review setting (decisions.md, "Change requests (turn 5)"), for its members with a session
 * (X-Organization-Id names the organization): any member reads it and its history, admins change it. API keys get 403.
 */
@ApiTags('organization')
@Controller('organization/review')
export class ReviewController {
  constructor(
    private readonly review: ReviewService,
    private readonly events: ReviewEvents,
  ) {}

  @Get()
  @MemberRoute('viewer', ANY_MEMBER)
  @ApiOperation({
    summary: "The organization's review setting",
    description:
      'Off by default (`{required: false, approvals: 1, selfApproval: false}`). With `required` on, direct flag writes (create, PATCH, ' +
      'delete, restore, import, a new schedule) answer 403 REVIEW_REQUIRED: changes go through POST /v1/change-requests, and apply once ' +
      '`approvals` other members approved (the author too with `selfApproval`). API keys with FLAGS_WRITE_UNREVIEWED still write directly.',
  })
  @ApiOkResponse({ type: ReviewSettingDto, example: SETTING_EXAMPLE })
  get(@CurrentPrincipal() principal: SessionPrincipal): Promise<ReviewSettingDto> {
    return this.review.get(principal.organizationId);
  }

  @Put()
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Change the review setting (admins)',
    description:
      'The whole setting, every field. A change is appended to the history (who, when, before, after) in the same transaction; a PUT ' +
      'that changes nothing appends nothing. Turning `required` on fails every pending flag schedule of the organization (state ' +
      '`failed`, reason `REVIEW_REQUIRED`): it would apply unreviewed. From the answer on, no direct write commits unreviewed.',
  })
  @ApiJsonBody(ReviewSettingDto, {
    on: { summary: 'Require one approval by another member', value: SETTING_EXAMPLE },
    off: { summary: 'Turn review off', value: { required: false, approvals: 1, selfApproval: false } },
  })
  @ApiOkResponse({ type: ReviewSettingDto, example: SETTING_EXAMPLE, description: 'The setting now' })
  async set(@CurrentPrincipal() principal: SessionPrincipal, @Body() dto: ReviewSettingDto): Promise<ReviewSettingDto> {
    const { setting, entry } = await this.review.set(principal, dto);
    if (entry) this.events.changed(principal.organizationId, entry);
    return setting;
  }

  @Get('history')
  @MemberRoute('viewer', ANY_MEMBER)
  @ApiOperation({
    summary: 'Every change of the review setting, newest first',
    description: 'Append-only: who changed it, when, from what to what. Switching review off, writing and switching it back on leaves a trace here.',
  })
  @ApiOkResponse({ type: ReviewHistoryPageDto, example: HISTORY_EXAMPLE })
  history(@CurrentPrincipal() principal: SessionPrincipal, @Query() query: ReviewHistoryQueryDto): Promise<ReviewHistoryPageDto> {
    return this.review.history(principal.organizationId, query);
  }
}
