import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';
import { FlagQuota, quotaOf } from './allowance';
import { QuotaRepository } from './quota.repository';

export interface QuotaSnapshot {
  quota: FlagQuota;
  lockedFlagIds: ReadonlySet<string>;
}

/** The allowance and its use, read on the `Db` it is given (a flag write's transaction, or autocommit). */
@Injectable()
export class QuotaService {
  constructor(private readonly quotas: QuotaRepository) {}

  async quotaFor(db: Db, organizationId: string): Promise<FlagQuota> {
    const { used, subscribed } = await this.quotas.usage(db, organizationId);
    return quotaOf(used, subscribed);
  }

  /** The quota together with which flags it locks; lists and lock checks need both. */
  async snapshot(db: Db, organizationId: string): Promise<QuotaSnapshot> {
    const quota = await this.quotaFor(db, organizationId);
    const lockedFlagIds = quota.locked > 0 ? await this.quotas.lockedFlagIds(db, organizationId, quota.max) : new Set<string>();
    return { quota, lockedFlagIds };
  }
}
