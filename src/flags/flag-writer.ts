import { Injectable } from '@nestjs/common';
import { AuditActor } from '../audit/audit-entry';
import { AuditRepository } from '../audit/audit.repository';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { Transactions } from '../database/transactions';
import { FlagChange } from './flag.model';

/** What a flag-changing service method answers: its result, and the change it made (null when none). */
export class FlagWrite<T> {
  constructor(
    readonly result: T,
    readonly change: FlagChange | null,
  ) {}
}

/**
 * The one way a flag changes. `write` runs in one transaction with the audit entry of the change it reports:
 * both exist, or neither does. After the commit every instance's config caches hear of the organization.
 * HTTP routes reach it through `@AuditedFlagWrite()`; the scheduler, whose transaction also settles the
 * schedule, uses `record` inside it and `announce` after it commits.
 */
@Injectable()
export class FlagWriter {
  constructor(
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
    private readonly bus: InvalidationBus,
  ) {}

  async write<T>(actor: AuditActor, write: () => Promise<FlagWrite<T>>): Promise<T> {
    const { result, change } = await this.transactions.run(() => this.record(actor, write));
    if (change) this.announce(change);
    return result;
  }

  /** The write and its audit entry, in the caller's transaction; the caller announces the change once it commits. */
  async record<T>(actor: AuditActor, write: () => Promise<FlagWrite<T>>): Promise<FlagWrite<T>> {
    if (!this.transactions.active) throw new Error('FlagWriter.record must run inside a transaction');
    const outcome = await write();
    if (!(outcome instanceof FlagWrite)) throw new Error('A flag write must answer a FlagWrite');
    if (outcome.change) await this.audit.append({ ...outcome.change, ...actor });
    return outcome;
  }

  /** Tells every instance's config caches that the organization's flags changed (after the commit). */
  announce(change: FlagChange): void {
    this.bus.publish('flags', change.organizationId);
  }
}
