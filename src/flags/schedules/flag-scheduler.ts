import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuditActor } from '../../audit/audit-entry';
import { CLOCK, Clock } from '../../common/clock';
import { DomainError } from '../../common/domain-error';
import { Sql } from '../../database/sql';
import { Transactions } from '../../database/transactions';
import { ChangeFeed } from '../../invalidation/change-feed';
import { FlagWriter } from '../flag-writer';
import { FlagsService } from '../flags.service';
import { FlagSchedule } from './flag-schedule';
import { FlagSchedulesRepository } from './flag-schedules.repository';
import { DueWork } from './due-work';

/** How often each instance looks for due schedules: a change applies within this (plus its own time) of `at`. */
export const SCHEDULER_TICK_MS = 250;
/** Schedules one tick applies at most, so that a long catch-up yields to the next tick (and to shutdown). */
const MAX_PER_TICK = 200;
const SYSTEM: AuditActor = { actorType: 'system', actorId: null };

export interface ScheduleOutcome {
  schedule: FlagSchedule;
  state: 'applied' | 'failed';
  reason?: string;
}

/**
 * Applies due schedules, on every instance, each exactly once: a schedule is claimed with `FOR UPDATE SKIP
 * LOCKED` in the transaction that applies it, so two instances never take the same one, and a crash before the
 * commit leaves it pending for the next tick anywhere. Schedules that fell due while every instance was down
 * apply on the first tick after start, in order.
 *
 * A schedule is applied as PATCH applies a body (FlagsService.update: the lock and archive rules, the label),
 * audited as `system` with the schedule's id as its context, in one transaction with its own state; the config caches hear of it after the commit.
 * When the rules refuse it (locked, value change of an archived flag, flag deleted) it fails with the reason,
 * and nothing else changes.
 */
@Injectable()
export class FlagScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FlagScheduler.name);
  private readonly work: DueWork<ScheduleOutcome>;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly schedules: FlagSchedulesRepository,
    private readonly flags: FlagsService,
    private readonly writer: FlagWriter,
    feed: ChangeFeed,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.work = new DueWork(
      {
        name: 'Scheduled changes',
        nextDueSql: FlagSchedulesRepository.NEXT_DUE_AT,
        applyDue: (now) => this.applyDue(now),
        readNextDue: () => this.schedules.nextDueAt(this.sql),
      },
      feed,
      clock,
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.work.start(SCHEDULER_TICK_MS);
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  /** Applies what is due at the clock's time, then reads when the next one falls due. Concurrent calls share one run. */
  runDue(): Promise<ScheduleOutcome[]> {
    return this.work.runDue();
  }

  /** A schedule was made here: its time is known without waiting for the next read. */
  scheduled(at: Date): void {
    this.work.scheduled(at);
  }

  /**
   * What the clock's timer runs every SCHEDULER_TICK_MS: applies what is due, if anything is. Tests that hold the
   * clock call it after moving the time; it never throws.
   */
  tick(): Promise<void> {
    return this.work.tick();
  }

  private async applyDue(now: Date): Promise<ScheduleOutcome[]> {
    const outcomes: ScheduleOutcome[] = [];
    while (outcomes.length < MAX_PER_TICK && this.work.active) {
      const outcome = await this.applyNext(now);
      if (!outcome) break;
      outcomes.push(outcome);
    }
    return outcomes;
  }

  private async applyNext(now: Date): Promise<ScheduleOutcome | null> {
    const applied = await this.transactions.run(async (tx) => {
      const schedule = await this.schedules.claimDue(tx, now);
      if (!schedule) return null;
      try {
        const write = await this.writer.record(tx, SYSTEM, async (tx) =>
          (await this.flags.update(tx, schedule.organizationId, schedule.flagId, schedule.change)).because({ scheduleId: schedule.id }),
        );
        await this.schedules.settle(tx, schedule.id, { state: 'applied' }, now);
        return { outcome: { schedule, state: 'applied' as const }, write };
      } catch (error) {
        // A refusal by the flag rules, raised before anything was written: the schedule fails, and only it changes.
        if (!(error instanceof DomainError)) throw error;
        await this.schedules.settle(tx, schedule.id, { state: 'failed', reason: error.message }, now);
        return { outcome: { schedule, state: 'failed' as const, reason: error.message }, write: null };
      }
    });
    if (!applied) return null;
    if (applied.write) this.writer.announce(applied.write);
    const { schedule, state, reason } = applied.outcome;
    const line = { scheduleId: schedule.id, flagId: schedule.flagId, organizationId: schedule.organizationId, at: schedule.at.toISOString() };
    if (state === 'applied') this.logger.log({ ...line, msg: 'scheduled change applied' });
    else this.logger.warn({ ...line, reason, msg: 'scheduled change failed' });
    return applied.outcome;
  }
}
