import { Injectable } from '@nestjs/common';
import { AuditActor } from '../audit/audit-entry';
import { AuditRepository } from '../audit/audit.repository';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { FlagChange } from './flag.model';
import { FlagsRepository } from './flags.repository';

/** What a flag-changing service method answers: its result, and the change it made (null when none). */
export class FlagWrite<T> {
  constructor(
    readonly result: T,
    readonly change: FlagChange | null,
  ) {}
}

/** A flag change, made in the transaction it is given: what an audited route answers, and what FlagWriter runs. */
export type FlagWriteRun<T> = (tx: Transaction) => Promise<FlagWrite<T>>;

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
    private readonly flags: FlagsRepository,
    private readonly bus: InvalidationBus,
  ) {}

  async write<T>(actor: AuditActor, write: FlagWriteRun<T>): Promise<T> {
    const { result, change } = await this.transactions.run((tx) => this.record(tx, actor, write));
    if (change) this.announce(change);
    return result;
  }

  /**
   * The write, its audit entry and the organization's new config version, in the caller's transaction `tx`; the
   * caller announces the change once it commits. The version is bumped last: a write locks its flag rows first, so
   * the version row is the last lock any flag write takes.
   */
  async record<T>(tx: Transaction, actor: AuditActor, write: FlagWriteRun<T>): Promise<FlagWrite<T>> {
    const outcome = await write(tx);
    if (!(outcome instanceof FlagWrite)) throw new Error('A flag write must answer a FlagWrite');
    if (outcome.change) {
      await this.audit.append(tx, { ...outcome.change, ...actor });
      await this.flags.bumpConfigVersion(tx, outcome.change.organizationId);
    }
    return outcome;
  }

  /** Tells every instance's config caches that the organization's flags changed (after the commit). */
  announce(change: FlagChange): void {
    this.bus.publish('flags', change.organizationId);
  }
}
