import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuditActor } from '../../audit/audit-entry';
import { CLOCK, Clock, ClockTimer } from '../../common/clock';
import { DomainError } from '../../common/domain-error';
import { Sql } from '../../database/sql';
import { Transactions } from '../../database/transactions';
import { ChangeFeed } from '../../invalidation/change-feed';
import { FlagWriter } from '../flag-writer';
import { FlagsService } from '../flags.service';
import { FlagSchedule } from './flag-schedule';
import { FlagSchedulesRepository } from './flag-schedules.repository';

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
  private timer: ClockTimer | null = null;
  private running: Promise<ScheduleOutcome[]> | null = null;
  private failing = false;
  /**
   * When the earliest pending schedule falls due (ms, clock time), null for none: read by the change feed with
   * everything else it reads (every ChangeFeed.PERIOD_MS, the first time before the app serves), and after each run.
   * A tick costs nothing until that time has come.
   */
  private nextDueAt: number | null = null;
  /** The earliest schedule made here since the last run: a feed read that began before it committed did not see it. */
  private madeHere: number | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly schedules: FlagSchedulesRepository,
    private readonly flags: FlagsService,
    private readonly writer: FlagWriter,
    feed: ChangeFeed,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    feed.register<string | null>({ sql: FlagSchedulesRepository.NEXT_DUE_AT, apply: ([at]) => this.heardNextDue(at) });
  }

  onApplicationBootstrap(): void {
    this.timer = this.clock.every(SCHEDULER_TICK_MS, () => void this.tick());
  }

  async onApplicationShutdown(): Promise<void> {
    this.timer?.stop();
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Applies what is due at the clock's time, then reads when the next one falls due. Concurrent calls share one run. */
  runDue(): Promise<ScheduleOutcome[]> {
    this.running ??= this.applyDue(new Date(this.clock.now()))
      .then(async (outcomes) => {
        this.madeHere = null;
        const next = await this.schedules.nextDueAt(this.sql);
        this.nextDueAt = next?.getTime() ?? null;
        return outcomes;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** A schedule was made here: its time is known without waiting for the next read. */
  scheduled(at: Date): void {
    this.madeHere = earliest(this.madeHere, at.getTime());
    this.nextDueAt = earliest(this.nextDueAt, at.getTime());
  }

  /** What the change feed read: the earliest pending schedule of every instance (ISO time, or null for none). */
  private heardNextDue(at: string | null): void {
    this.nextDueAt = earliest(at === null ? null : new Date(at).getTime(), this.madeHere);
  }

  /**
   * What the clock's timer runs every SCHEDULER_TICK_MS: applies what is due, if anything is. Tests that hold the
   * clock call it after moving the time; it never throws.
   */
  async tick(): Promise<void> {
    if (this.nextDueAt === null || this.nextDueAt > this.clock.now()) return;
    try {
      await this.runDue();
      if (this.failing) this.logger.log('Scheduled changes apply again');
      this.failing = false;
    } catch (error) {
      // The database is away: said once, retried each tick while something is due.
      if (!this.failing) this.logger.warn(`Scheduled changes wait: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  private async applyDue(now: Date): Promise<ScheduleOutcome[]> {
    const outcomes: ScheduleOutcome[] = [];
    while (outcomes.length < MAX_PER_TICK && this.timer !== null) {
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

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null || a <= b ? a : b;
}
