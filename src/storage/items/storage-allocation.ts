import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Sql, Transaction } from '../../database/sql';
import { Transactions } from '../../database/transactions';
import { AllocationUsage, StorageErrors } from '../storage.errors';
import { StorageRepository } from './storage.repository';

/**
 * STORAGE_ENFORCE_ALLOCATION: the organization's `storageAllocation` as a hard limit (off by default, when the
 * allocation is only reported, with any overage, by GET /v1/storage).
 *
 * What counts against it: complete files, plus pending items whose signed URL has not expired (or that an
 * upload is streaming into), at their declared size. Adding bytes is checked and written in one transaction
 * that first takes the organization's row lock, so racing requests are serialised and none can overshoot:
 * - a pre-allocated signed URL reserves its declared size when it is issued (its PUT then needs no check);
 * - a non-allocated upload has no declared size: it streams with the room left when it starts as its byte
 *   limit (so an oversized file is cut off early, not stored), and is checked again, atomically, when its
 *   row is written, since other uploads may have taken the room while it streamed.
 */
@Injectable()
export class StorageAllocation {
  constructor(
    private readonly sql: Sql,
    private readonly repository: StorageRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  get enforced(): boolean {
    return this.config.storage.enforceAllocation;
  }

  /**
   * Runs `write`, which adds `bytes` to the organization's storage, only if they fit, in one transaction under the
   * organization's row lock. Without enforcement, just runs it in a transaction of its own (with its webhook event).
   */
  async withinAllocation<T>(organizationId: string, bytes: number, write: (tx: Transaction) => Promise<T>): Promise<T> {
    if (!this.enforced) return this.transactions.run(write);
    return this.transactions.run(async (tx) => {
      const allocation = await this.repository.lockAllocation(tx, organizationId);
      if (allocation === null) throw StorageErrors.organizationNotFound(organizationId);
      const reserved = await this.repository.reservedBytes(tx, organizationId, new Date(this.clock.now()));
      if (reserved + bytes > allocation) throw StorageErrors.allocationExceeded({ allocation, reserved }, bytes);
      return write(tx);
    });
  }

  /**
   * The allocation and its use as a non-allocated upload starts (no lock: the commit checks again); null
   * without enforcement.
   */
  async usageNow(organizationId: string): Promise<AllocationUsage | null> {
    if (!this.enforced) return null;
    const usage = await this.repository.allocationUsage(this.sql, organizationId, new Date(this.clock.now()));
    if (!usage) throw StorageErrors.organizationNotFound(organizationId);
    return usage;
  }
}
