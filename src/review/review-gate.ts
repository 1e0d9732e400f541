import { HttpStatus, Injectable } from '@nestjs/common';
import { Permission } from '../auth/permission';
import { Principal } from '../auth/principal';
import { DomainError } from '../common/domain-error';
import { Transaction } from '../database/sql';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { ReviewSetting, ReviewSettings } from './review-settings.repository';

export const REVIEW_REQUIRED = 'REVIEW_REQUIRED';

/** The way through a refused direct write. */
export const CHANGE_REQUESTS_ROUTE = 'POST /v1/change-requests';

/** 403 `{statusCode, error: "REVIEW_REQUIRED", message, code: "REVIEW_REQUIRED"}`: the API's error body, with `code` as the decisions name it. */
export const reviewRequired = () =>
  Object.assign(
    new DomainError(
      HttpStatus.FORBIDDEN,
      REVIEW_REQUIRED,
      `This organization requires review of flag changes: propose the change with ${CHANGE_REQUESTS_ROUTE} ` +
        '(a change request, applied once approved). Only an API key with FLAGS_WRITE_UNREVIEWED writes flags directly here.',
    ),
    { responseDetails: { code: REVIEW_REQUIRED } },
  );

/**
 * Whether `principal` may change flags without a change request under `setting`: always with review off; with it
 * on, only an API key holding FLAGS_WRITE_UNREVIEWED (a machine: CI, a migration script). No role has it, and a
 * caller not named (an in-process call) is held to the rule.
 */
export function mayWriteDirectly(setting: ReviewSetting, principal: Principal | undefined): boolean {
  if (!setting.required) return true;
  return principal?.type === 'apiKey' && principal.permissions.has(Permission.FLAGS_WRITE_UNREVIEWED);
}

/**
 * The guard on direct flag writes (decisions.md, "Change requests (turn 5)": guarded writes). Called first in the
 * write's transaction: it takes the organization's row lock, as every flag write and every change of the setting
 * does, then reads the setting. A PUT that turns review on and a write therefore serialise: a write that commits
 * before the PUT's commit was admitted under review off, and every write that starts after waits for the PUT and
 * reads review on. Taking the organization lock first keeps the lock order (organization row, then flag rows).
 */
@Injectable()
export class ReviewGate {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly settings: ReviewSettings,
  ) {}

  async admit(tx: Transaction, organizationId: string, principal: Principal | undefined): Promise<void> {
    // Such a key passes whatever the setting: no need to read it, or to lock for it.
    if (mayWriteDirectly({ required: true, approvals: 1, selfApproval: false }, principal)) return;
    await this.organizations.lockOrganization(tx, organizationId);
    if (!mayWriteDirectly(await this.settings.settingOf(tx, organizationId), principal)) throw reviewRequired();
  }
}
