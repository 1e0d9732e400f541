import { Inject, Injectable } from '@nestjs/common';
import { SessionPrincipal } from '../auth/principal';
import { CLOCK, Clock } from '../common/clock';
import { pageWindow } from '../common/dto/pagination';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { FlagSchedulesRepository } from '../flags/schedules/flag-schedules.repository';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { WebhookEvents } from '../webhooks/webhook-events';
import { ChangeRequestsRepository } from '../change-requests/change-requests.repository';
import { ReviewHistoryEntryDto, ReviewHistoryPageDto, ReviewHistoryQueryDto, ReviewSettingDto } from './dto/review-setting.dto';
import { REVIEW_REQUIRED } from './review-gate';
import { ReviewHistoryRow, ReviewSetting, ReviewSettings } from './review-settings.repository';

/**
 * An organization's review setting, read by its members and changed by its admins. A change runs under the
 * organization's row lock (concurrent changes queue; flag writes, which take the same lock, see the setting before or
 * after, never half of it), stores the setting and appends its history row; turning review on fails the pending
 * schedules, which would otherwise apply unreviewed, and a change of `approvals` or `selfApproval` settles each pending
 * change request again (open or approved by the approvals that count now). Its webhook event is written in the same transaction.
 */
@Injectable()
export class ReviewService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly organizations: OrganizationsRepository,
    private readonly settings: ReviewSettings,
    private readonly schedules: FlagSchedulesRepository,
    private readonly webhooks: WebhookEvents,
    private readonly changeRequests: ChangeRequestsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async get(organizationId: string): Promise<ReviewSettingDto> {
    return ReviewSettingDto.from(await this.settings.settingOf(this.sql, organizationId));
  }

  /** The setting after the change, and the history entry it appended (null when it changed nothing). */
  async set(principal: SessionPrincipal, dto: ReviewSettingDto): Promise<{ setting: ReviewSettingDto; entry: ReviewHistoryRow | null }> {
    const organizationId = principal.organizationId;
    const after: ReviewSetting = { required: dto.required, approvals: dto.approvals, selfApproval: dto.selfApproval };
    const entry = await this.transactions.run(async (tx) => {
      if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationDeleted();
      const before = await this.settings.settingOf(tx, organizationId);
      if (sameSetting(before, after)) return null;
      const now = new Date(this.clock.now());
      const appended = await this.settings.store(tx, organizationId, principal.id, before, after, now);
      if (after.required && !before.required) await this.schedules.failPendingOfOrganization(tx, organizationId, REVIEW_REQUIRED, now);
      // A request approved under the old setting may lack approvals under the new one, or have enough now.
      if (after.approvals !== before.approvals || after.selfApproval !== before.selfApproval) {
        await this.changeRequests.reevaluatePending(tx, organizationId, after, now);
      }
      await this.webhooks.reviewSettingChanged(tx, organizationId, { organizationId, ...ReviewHistoryEntryDto.from(appended) });
      return appended;
    });
    return { setting: ReviewSettingDto.from(after), entry };
  }

  async history(organizationId: string, query: ReviewHistoryQueryDto): Promise<ReviewHistoryPageDto> {
    const { rows, total } = await this.settings.history(this.sql, organizationId, pageWindow(query));
    return ReviewHistoryPageDto.from(rows, total, query);
  }
}

export function sameSetting(a: ReviewSetting, b: ReviewSetting): boolean {
  return a.required === b.required && a.approvals === b.approvals && a.selfApproval === b.selfApproval;
}
