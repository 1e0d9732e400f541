import { Injectable } from '@nestjs/common';
import { AuditActor } from '../audit/audit-entry';
import { AuditRepository } from '../audit/audit.repository';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { OrganizationEvent, OrganizationEvents } from '../events/organization-events';
import { FlagChange, FlagChangeContext } from './flag.model';
import { FlagsRepository } from './flags.repository';
import { WebhookEvents } from '../webhooks/webhook-events';

/**
 * What a flag-changing service method answers: its result, and the changes it made (none for a no-op; several for
 * an import), all in one organization.
 */
export class FlagWrite<T> {
  readonly changes: readonly FlagChange[];

  constructor(
    readonly result: T,
    changes: FlagChange | readonly FlagChange[] | null,
    /** The row version of the one flag the result shows, after the write: its answer's ETag (none for a deletion or an import). */
    readonly version?: number,
    /** Other events of the consoles' stream the write's transaction made true (a change request made of an import), told after the commit. */
    readonly events: readonly { organizationId: string; event: OrganizationEvent }[] = [],
  ) {
    this.changes = changes === null ? [] : Array.isArray(changes) ? changes : [changes as FlagChange];
  }

  /** The same write, each of its audit entries saying why it was made (a restore, a schedule, an import). */
  because(context: FlagChangeContext): FlagWrite<T> {
    return new FlagWrite(
      this.result,
      this.changes.map((change) => ({ ...change, context })),
      this.version,
      this.events,
    );
  }

  /** The organization whose flags changed, or null when nothing did. */
  get changedOrganization(): string | null {
    return this.changes[0]?.organizationId ?? null;
  }
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
    private readonly events: OrganizationEvents,
    private readonly webhooks: WebhookEvents,
  ) {}

  async write<T>(actor: AuditActor, write: FlagWriteRun<T>): Promise<T> {
    const outcome = await this.transactions.run((tx) => this.record(tx, actor, write));
    this.announce(outcome);
    return outcome.result;
  }

  /**
   * The write, an audit entry per change, its webhook event (one for the whole write, when an endpoint wants it) and
   * the organization's new config version (once, however many flags changed), in the caller's transaction `tx`; the
   * caller announces the write once it commits. The version is bumped last: a write locks its flag rows first, so the
   * version row is the last lock any flag write takes.
   */
  async record<T>(tx: Transaction, actor: AuditActor, write: FlagWriteRun<T>): Promise<FlagWrite<T>> {
    const outcome = await write(tx);
    if (!(outcome instanceof FlagWrite)) throw new Error('A flag write must answer a FlagWrite');
    for (const change of outcome.changes) await this.audit.append(tx, { ...change, ...actor });
    await this.webhooks.flagChanged(tx, actor, outcome.changes);
    const organizationId = outcome.changedOrganization;
    if (organizationId !== null) await this.flags.bumpConfigVersion(tx, organizationId);
    return outcome;
  }

  /**
   * Tells every instance's config caches that the organization's flags changed (after the commit): one message
   * for the whole write, so an import of 50 flags costs each instance one payload rebuild.
   */
  announce(write: FlagWrite<unknown>): void {
    for (const { organizationId, event } of write.events) this.events.announce(organizationId, event);
    const organizationId = write.changedOrganization;
    if (organizationId === null) return;
    this.bus.publish('flags', organizationId);
    // The console's streams: which flags changed, a deleted one included.
    const flagIds = write.changes
      .map((change) => change.flagId ?? change.deletedFlagId)
      .filter((id): id is string => id !== undefined && id !== null);
    this.events.announce(organizationId, { type: 'flags', flagIds });
  }
}
