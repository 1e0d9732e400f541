import { Injectable } from '@nestjs/common';
import { FlagQuota, quotaOf } from './allowance';
import { QuotaRepository } from './quota.repository';

export interface QuotaSnapshot {
  quota: FlagQuota;
  lockedFlagIds: ReadonlySet<string>;
}

@Injectable()
export class QuotaService {
  constructor(private readonly quotas: QuotaRepository) {}

  async quotaFor(organizationId: string): Promise<FlagQuota> {
    const { used, subscribed } = await this.quotas.usage(organizationId);
    return quotaOf(used, subscribed);
  }

  /** The quota together with which flags it locks; lists and lock checks need both. */
  async snapshot(organizationId: string): Promise<QuotaSnapshot> {
    const quota = await this.quotaFor(organizationId);
    const lockedFlagIds = quota.locked > 0 ? await this.quotas.lockedFlagIds(organizationId, quota.max) : new Set<string>();
    return { quota, lockedFlagIds };
  }
}
