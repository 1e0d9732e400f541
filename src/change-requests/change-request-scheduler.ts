import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { FlagWriter } from '../flags/flag-writer';
import { SCHEDULER_TICK_MS } from '../flags/schedules/flag-scheduler';
import { ChangeFeed } from '../invalidation/change-feed';
import { ChangeRequestsRepository } from './change-requests.repository';
import { ChangeRequestsService } from './change-requests.service';

/** Requests one tick applies at most, so that a long catch-up yields to the next tick (and to shutdown). */
const MAX_PER_TICK = 100;

export interface ScheduledApplyOutcome {
  id: string;
  state: 'applied' | 'failed';
  reason?: string;
}

/**
 * Applies approved requests whose `applyAt` has come, on every instance, each exactly once: the flag scheduler's claim
 * loop (same tick, same clock, the change feed telling every instance when the next one falls due), over the requests'
 * own table. A request is claimed in the transaction that applies it, under its organization's row lock and its own,
 * and applied only if it is still approved then: a second instance finds it applied and moves on; a crash before the
 * commit leaves it approved for the next tick anywhere. Requests that fell due while every instance was down apply on
 * the first tick after start.
 */
@Injectable()
export class ChangeRequestScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeRequestScheduler.name);
  private timer: ClockTimer | null = null;
  private running: Promise<ScheduledApplyOutcome[]> | null = null;
  private failing = false;
  /** When the earliest approved request falls due (ms, clock time), null for none; a tick costs nothing until then. */
  private nextDueAt: number | null = null;
  private madeHere: number | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly requests: ChangeRequestsRepository,
    private readonly service: ChangeRequestsService,
    private readonly writer: FlagWriter,
    feed: ChangeFeed,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    feed.register<string | null>({ sql: ChangeRequestsRepository.NEXT_DUE_AT, apply: ([at]) => this.heardNextDue(at) });
    service.whenDue = (at) => this.scheduled(at);
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
  runDue(): Promise<ScheduledApplyOutcome[]> {
    this.running ??= this.applyDue(new Date(this.clock.now()))
      .then(async (outcomes) => {
        this.madeHere = null;
        const next = await this.requests.nextDueAt(this.sql);
        this.nextDueAt = next?.getTime() ?? null;
        return outcomes;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** A request was approved here with this `applyAt`: known without waiting for the next read. */
  scheduled(at: Date): void {
    this.madeHere = earliest(this.madeHere, at.getTime());
    this.nextDueAt = earliest(this.nextDueAt, at.getTime());
  }

  private heardNextDue(at: string | null): void {
    this.nextDueAt = earliest(at === null ? null : new Date(at).getTime(), this.madeHere);
  }

  /** What the clock's timer runs: applies what is due, if anything is; never throws. */
  async tick(): Promise<void> {
    if (this.nextDueAt === null || this.nextDueAt > this.clock.now()) return;
    try {
      await this.runDue();
      if (this.failing) this.logger.log('Scheduled change requests apply again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`Scheduled change requests wait: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  private async applyDue(now: Date): Promise<ScheduledApplyOutcome[]> {
    const outcomes: ScheduledApplyOutcome[] = [];
    const seen = new Set<string>();
    while (outcomes.length < MAX_PER_TICK) {
      const candidate = await this.requests.dueCandidate(this.sql, now);
      // Seen already: another instance holds it (its apply has not committed yet); it is theirs.
      if (!candidate || seen.has(candidate.id)) break;
      seen.add(candidate.id);
      const done = await this.transactions.run((tx) => this.service.applyDue(tx, candidate, now));
      if (!done) continue;
      if (done.write) this.writer.announce(done.write);
      this.service.announce(candidate.organizationId, candidate.id);
      const line = { changeRequestId: candidate.id, organizationId: candidate.organizationId };
      if (done.state === 'applied') this.logger.log({ ...line, msg: 'scheduled change request applied' });
      else this.logger.warn({ ...line, reason: done.reason, msg: 'scheduled change request failed' });
      outcomes.push({ id: candidate.id, state: done.state, reason: done.reason });
    }
    return outcomes;
  }
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null || a <= b ? a : b;
}
