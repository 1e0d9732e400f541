import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Db } from '../database/sql';
import { Allowance, allowanceFor, FlagQuota, quotaOf } from './allowance';
import { QuotaRepository } from './quota.repository';

/** The quota and the allowance it was counted against (a level's, or the organization's own: the messages differ). */
export interface QuotaUse {
  quota: FlagQuota;
  allowance: Allowance;
}

export interface QuotaSnapshot extends QuotaUse {
  lockedFlagIds: ReadonlySet<string>;
}

/**
 * The allowance and its use, read on the `Db` it is given (a flag write's transaction, or autocommit). Nothing is
 * cached: every instance reads the subscriptions and the organization's own allowance from the database on each
 * request, so a change made on one instance holds on every other from its commit on.
 */
@Injectable()
export class QuotaService {
  constructor(
    private readonly quotas: QuotaRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async quotaFor(db: Db, organizationId: string): Promise<FlagQuota> {
    return (await this.use(db, organizationId)).quota;
  }

  async use(db: Db, organizationId: string): Promise<QuotaUse> {
    const { used, subscribed, ownAllowance } = await this.quotas.usage(db, organizationId);
    const allowance = allowanceFor(subscribed, this.config.flagAllowances, ownAllowance);
    return { quota: quotaOf(used, subscribed, allowance), allowance };
  }

  /**
   * The quota together with which flags it locks; lists and lock checks need both. With `among` (a page of flags, one
   * flag), only which of those are locked.
   */
  async snapshot(db: Db, organizationId: string, among?: readonly string[]): Promise<QuotaSnapshot> {
    const use = await this.use(db, organizationId);
    return { ...use, lockedFlagIds: await this.lockedOf(db, organizationId, use, among) };
  }

  /** Which of `among` (all flags when absent) `use` locks. */
  lockedOf(db: Db, organizationId: string, use: QuotaUse, among?: readonly string[]): Promise<Set<string>> {
    if (use.quota.locked === 0) return Promise.resolve(new Set());
    return this.quotas.lockedFlagIds(db, organizationId, use.quota.max, among);
  }
}
