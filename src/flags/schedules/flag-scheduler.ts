import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuditActor } from '../../audit/audit-entry';
import { CLOCK, Clock, ClockTimer } from '../../common/clock';
import { DomainError } from '../../common/domain-error';
import { Sql } from '../../database/sql';
import { Transactions } from '../../database/transactions';
import { FlagChange } from '../flag.model';
import { FlagWriter } from '../flag-writer';
import { FlagsService } from '../flags.service';
import { FlagSchedule } from './flag-schedule';
import { FlagSchedulesRepository } from './flag-schedules.repository';

/** How often each instance looks for due schedules: a change applies within this (plus its own time) of `at`. */
export const SCHEDULER_TICK_MS = 250;
/** Schedules one tick applies at most, so that a long catch-up yields to the next tick (and to shutdown). */
const MAX_PER_TICK = 200;
/**
 * How often an instance reads when the next pending schedule falls due. Between reads a tick costs nothing
 * unless that time has come: schedules made on this instance are known at once (so they apply within a second
 * here), those made elsewhere within this (their own instance applies them meanwhile, unless it went down).
 */
export const NEXT_DUE_REFRESH_MS = 10_000;
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
 * audited as `system`, in one transaction with its own state; the config caches hear of it after the commit.
 * When the rules refuse it (locked, value change of an archived flag, flag deleted) it fails with the reason,
 * and nothing else changes.
 */
@Injectable()
export class FlagScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FlagScheduler.name);
  private timer: ClockTimer | null = null;
  private running: Promise<ScheduleOutcome[]> | null = null;
  private failing = false;
  /** When the earliest pending schedule falls due (ms, clock time), null for none, as of the last read. */
  private nextDueAt: number | null = null;
  /** Clock time of the last read of nextDueAt; 0 so that the first tick reads it (and catches up). */
  private readAt = 0;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly schedules: FlagSchedulesRepository,
    private readonly flags: FlagsService,
    private readonly writer: FlagWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

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
        this.readAt = this.clock.now();
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
    if (this.nextDueAt === null || at.getTime() < this.nextDueAt) this.nextDueAt = at.getTime();
  }

  /**
   * What the clock's timer runs every SCHEDULER_TICK_MS: applies what is due, if anything is (or the next due
   * time is old). Tests that hold the clock call it after moving the time; it never throws.
   */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const due = this.nextDueAt !== null && this.nextDueAt <= now;
    if (!due && now - this.readAt < NEXT_DUE_REFRESH_MS) return;
    try {
      await this.runDue();
      if (this.failing) this.logger.log('Scheduled changes apply again');
      this.failing = false;
    } catch (error) {
      // The database is away: said once, retried (each tick while something is due, else at the next read).
      this.readAt = this.clock.now();
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
        const write = await this.writer.record(tx, SYSTEM, (tx) => this.flags.update(tx, schedule.organizationId, schedule.flagId, schedule.change));
        await this.schedules.settle(tx, schedule.id, { state: 'applied' }, now);
        return { outcome: { schedule, state: 'applied' as const }, change: write.change };
      } catch (error) {
        // A refusal by the flag rules, raised before anything was written: the schedule fails, and only it changes.
        if (!(error instanceof DomainError)) throw error;
        await this.schedules.settle(tx, schedule.id, { state: 'failed', reason: error.message }, now);
        return { outcome: { schedule, state: 'failed' as const, reason: error.message }, change: null as FlagChange | null };
      }
    });
    if (!applied) return null;
    if (applied.change) this.writer.announce(applied.change);
    const { schedule, state, reason } = applied.outcome;
    const line = { scheduleId: schedule.id, flagId: schedule.flagId, organizationId: schedule.organizationId, at: schedule.at.toISOString() };
    if (state === 'applied') this.logger.log({ ...line, msg: 'scheduled change applied' });
    else this.logger.warn({ ...line, reason, msg: 'scheduled change failed' });
    return applied.outcome;
  }
}
