import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { FlagWriter } from '../flags/flag-writer';
import { DueWork } from '../flags/schedules/due-work';
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
  private readonly work: DueWork<ScheduledApplyOutcome>;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly requests: ChangeRequestsRepository,
    private readonly service: ChangeRequestsService,
    private readonly writer: FlagWriter,
    feed: ChangeFeed,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.work = new DueWork(
      {
        name: 'Scheduled change requests',
        nextDueSql: ChangeRequestsRepository.NEXT_DUE_AT,
        applyDue: (now) => this.applyDue(now),
        readNextDue: () => this.requests.nextDueAt(this.sql),
      },
      feed,
      clock,
      this.logger,
    );
    service.whenDue = (at) => this.scheduled(at);
  }

  onApplicationBootstrap(): void {
    this.work.start(SCHEDULER_TICK_MS);
  }

  onApplicationShutdown(): Promise<void> {
    return this.work.stop();
  }

  /** Applies what is due at the clock's time, then reads when the next one falls due. Concurrent calls share one run. */
  runDue(): Promise<ScheduledApplyOutcome[]> {
    return this.work.runDue();
  }

  /** A request was approved here with this `applyAt`: known without waiting for the next read. */
  scheduled(at: Date): void {
    this.work.scheduled(at);
  }

  /** What the clock's timer runs: applies what is due, if anything is; never throws. */
  tick(): Promise<void> {
    return this.work.tick();
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
