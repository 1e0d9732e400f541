import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { Db, Sql, Transaction } from '../database/sql';
import { ChangeFeed } from '../invalidation/change-feed';
import { Metrics } from '../metrics/metrics';
import { OutboxChannel, OutboxDelivery, PermanentDeliveryError } from './outbox-channel';
import { CHANNEL_NAME, OutboxRepository, OutboxRow, OutboxRowState } from './outbox.repository';
import { afterFailure } from './retry-policy';

/** How often each instance checks whether a row fell due: a row written elsewhere goes out within this of its time. */
export const OUTBOX_TICK_MS = 250;
/** Rows one claim takes (and sends at once), so that a burst is shared between instances rather than taken by one. */
const CLAIM_BATCH = 10;
/** Rows one run sends at most before it yields to the next tick (and to shutdown). */
const MAX_PER_RUN = 200;
/**
 * After a row is written here, the ticks look for due rows for this long (process time) without waiting to hear of
 * it: the writing transaction commits a moment later, and its row then goes out at the next tick.
 */
const WAKE_WINDOW_MS = 2_000;
/** How long shutdown waits for the sends in flight; a row still out after it is taken again when its lease runs out. */
const SHUTDOWN_WAIT_MS = 1_000;

export interface DeliveryOutcome {
  id: string;
  channel: string;
  attempt: number;
  outcome: 'succeeded' | 'retry' | 'failed' | 'skipped';
  error?: string;
}

/**
 * The outbox (decisions.md, "Trust", Mail, and "Webhooks", Delivery): what the service sends to the outside world
 * (mail, later webhook events), written by `enqueue` in the transaction that causes it, so that a rolled-back change
 * sends nothing and a committed one is delivered at least once, whatever happens to the instance after the commit.
 *
 * One worker per instance, for every channel registered on it: every OUTBOX_TICK_MS it claims due rows
 * (OutboxRepository.claimDue: by state and time, `FOR UPDATE SKIP LOCKED`, leased for twice the channel's attempt
 * timeout), sends each through its channel, and records the outcome: delivered, a retry at the time the channel's
 * policy gives (with jitter), or given up with the last error once the policy's window or attempts are spent. Several
 * instances share the rows, one instance sending a given row at a time; a row whose instance died mid-send is sent
 * again once its lease has run out.
 *
 * A tick costs nothing until a row is due: when the earliest one falls due is read with the change feed (every
 * instance's rows, every ChangeFeed.PERIOD_MS), after each run, and a row written on this instance makes the ticks
 * look at once (WAKE_WINDOW_MS). Shutdown claims nothing more and waits briefly for the sends in flight; rows still
 * pending stay in the table for the next instance or the next start.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Outbox.name);
  private readonly channels = new Map<string, OutboxChannel>();
  private timer: ClockTimer | null = null;
  private stopped = false;
  private running: Promise<DeliveryOutcome[]> | null = null;
  /** When the earliest pending row of this instance's channels is due (clock ms), null for none known. */
  private nextDueAt: number | null = null;
  /** Until when (performance.now()) the ticks look for rows regardless: a row written here may just have committed. */
  private wakeUntil = -Infinity;
  private failing = false;
  private readonly outcomes: Counter<'channel' | 'outcome'>;

  constructor(
    private readonly sql: Sql,
    private readonly rows: OutboxRepository,
    feed: ChangeFeed,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() metrics?: Metrics,
  ) {
    this.outcomes = new Counter({
      name: 'flagstore_outbox_deliveries_total',
      help: 'Outbox attempts by channel (mail, webhook) and outcome: succeeded, retry, failed (given up), skipped',
      labelNames: ['channel', 'outcome'] as const,
      registers: metrics ? [metrics.registry] : [],
    });
    const channelNames = () => [...this.channels.keys()];
    feed.register<string | null>({
      get sql() {
        return OutboxRepository.nextDueSource(channelNames());
      },
      apply: ([at]) => {
        this.nextDueAt = at === null || at === undefined ? null : new Date(at).getTime();
      },
    });
  }

  /**
   * Makes this instance deliver the channel's rows. Called by the channel's module while the app is built (from a
   * constructor); a name is registered once.
   */
  register<Payload>(channel: OutboxChannel<Payload>): void {
    if (!CHANNEL_NAME.test(channel.name)) throw new Error(`Outbox channel name "${channel.name}" must match ${String(CHANNEL_NAME)}`);
    if (this.channels.has(channel.name)) throw new Error(`Outbox channel "${channel.name}" is registered twice`);
    this.channels.set(channel.name, channel as OutboxChannel);
  }

  /**
   * Writes a row for `channel` in the caller's transaction and answers its id (to look its delivery up with
   * `state`). It goes out after the commit, on this instance or another; a rollback leaves nothing.
   *
   * With `queue`, the row goes at the end of that queue (a webhook endpoint): a queue's rows are sent one at a time,
   * in the order their transactions committed, each once the one before it has settled. `skipped` records a row that
   * is never to be sent (its endpoint is disabled), in its place in the queue.
   */
  async enqueue(tx: Transaction, channel: string, payload: unknown, queue?: { key: string; skipped?: boolean }): Promise<string> {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`Outbox channel name "${channel}" must match ${String(CHANNEL_NAME)}`);
    const now = new Date(this.clock.now());
    const id =
      queue === undefined
        ? await this.rows.insert(tx, channel, payload, now)
        : await this.rows.insertOrdered(tx, channel, queue.key, payload, now, queue.skipped === true);
    if (queue?.skipped !== true) this.wakeUntil = performance.now() + WAKE_WINDOW_MS;
    return id;
  }

  /** Every pending row of a queue recorded as skipped, in the caller's transaction (an endpoint disabled); answers how many. */
  skipQueue(tx: Transaction, channel: string, key: string): Promise<number> {
    return this.rows.skipQueue(tx, channel, key);
  }

  /** A queue's rows deleted, in the caller's transaction (its endpoint deleted). */
  deleteQueue(tx: Transaction, channel: string, key: string): Promise<void> {
    return this.rows.deleteQueue(tx, channel, key);
  }

  /** Where a row stands (pending, succeeded, failed; attempts, last error); null for an unknown id. */
  state(db: Db, id: string): Promise<OutboxRowState | null> {
    return this.rows.state(db, id);
  }

  onApplicationBootstrap(): void {
    this.timer = this.clock.every(OUTBOX_TICK_MS, () => void this.tick());
  }

  /** Runs before the pools close: nothing more is claimed, and the sends in flight have a moment to be recorded. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.timer?.stop();
    this.timer = null;
    const running = this.running?.catch(() => undefined);
    if (!running) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /**
   * What the clock's timer runs every OUTBOX_TICK_MS: delivers what is due, if anything may be. Tests that hold the
   * clock call `deliverDue` after moving the time; this never throws.
   */
  async tick(): Promise<void> {
    if (this.stopped || this.channels.size === 0) return;
    const due = (this.nextDueAt !== null && this.nextDueAt <= this.clock.now()) || performance.now() < this.wakeUntil;
    if (!due) return;
    try {
      await this.deliverDue();
      if (this.failing) this.logger.log('The outbox delivers again');
      this.failing = false;
    } catch (error) {
      // The database is away: said once, tried again each tick while something may be due.
      if (!this.failing && !this.stopped) this.logger.warn(`The outbox waits: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  /** Claims and sends what is due at the clock's time, then reads when the next row falls due. Concurrent calls share one run. */
  deliverDue(): Promise<DeliveryOutcome[]> {
    this.running ??= this.run()
      .then(async (outcomes) => {
        const next = await this.rows.nextDueAt(this.sql, [...this.channels.keys()]);
        this.nextDueAt = next?.getTime() ?? null;
        return outcomes;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async run(): Promise<DeliveryOutcome[]> {
    const outcomes: DeliveryOutcome[] = [];
    const names = [...this.channels.keys()];
    if (names.length === 0) return outcomes;
    // One lease for the batch, long enough for the slowest channel's attempt, twice over.
    const leaseMs = 2 * Math.max(...[...this.channels.values()].map((channel) => channel.attemptTimeoutMs));
    while (!this.stopped && outcomes.length < MAX_PER_RUN) {
      const now = this.clock.now();
      const claimed = await this.rows.claimDue(this.sql, names, new Date(now), new Date(now + leaseMs), CLAIM_BATCH);
      // Every send of the batch ends (and is recorded) before the run does, even when one outcome could not be.
      const settled = await Promise.allSettled(claimed.map((row) => this.deliver(row)));
      for (const result of settled) if (result.status === 'fulfilled') outcomes.push(result.value);
      const unrecorded = settled.find((result) => result.status === 'rejected');
      if (unrecorded) throw unrecorded.reason;
      // A queue's row that settled made the next one due: claim again rather than wait a tick per event of a burst.
      if (claimed.length === 0 || (claimed.length < CLAIM_BATCH && claimed.every((row) => row.orderingKey === null))) break;
    }
    return outcomes;
  }

  private async deliver(row: OutboxRow): Promise<DeliveryOutcome> {
    const outcome = await this.attemptAndRecord(row);
    this.outcomes.inc({ channel: outcome.channel, outcome: outcome.outcome });
    return outcome;
  }

  private async attemptAndRecord(row: OutboxRow): Promise<DeliveryOutcome> {
    const channel = this.channels.get(row.channel)!;
    const base = { id: row.id, channel: row.channel, attempt: row.attempts };
    const line = { outboxId: row.id, channel: row.channel, attempt: row.attempts };
    const failure = await this.attempt(channel, row);
    const now = this.clock.now();
    const settled = channel.settledPayload ? channel.settledPayload(row.payload) : undefined;
    try {
      if (failure === 'skipped') {
        await this.rows.skip(row, new Date(now));
        this.logger.log({ ...line, msg: 'outbox row skipped' });
        return { ...base, outcome: 'skipped' };
      }
      if (failure === null) {
        await this.rows.succeed(row, new Date(now), settled);
        this.logger.log({ ...line, msg: 'outbox row delivered' });
        return { ...base, outcome: 'succeeded' };
      }
      const next = failure.permanent
        ? { giveUp: true as const }
        : afterFailure(channel.retry, { attempts: row.attempts, createdAt: row.createdAt.getTime() }, now);
      if ('giveUp' in next) {
        await this.rows.fail(row, failure.error, settled, new Date(now));
        this.logger.error({ ...line, error: failure.error, msg: 'outbox row given up' });
        await this.givenUp(channel, row, failure.error);
        return { ...base, outcome: 'failed', error: failure.error };
      }
      await this.rows.retryLater(this.sql, row.id, row.attempts, new Date(next.retryAt), failure.error);
      this.logger.warn({ ...line, error: failure.error, retryAt: new Date(next.retryAt).toISOString(), msg: 'outbox row will be retried' });
      return { ...base, outcome: 'retry', error: failure.error };
    } catch (error) {
      // The outcome could not be recorded (the database away, or the pool closed by a shutdown): the row stays
      // leased and is sent again after its lease, at least once as promised.
      if (!this.stopped) this.logger.warn({ ...line, msg: `outbox row's outcome not recorded: ${(error as Error).message}` });
      throw error;
    }
  }

  /** What the channel does once a row is given up (an endpoint disabled): its failure is logged, the row stays failed. */
  private async givenUp(channel: OutboxChannel, row: OutboxRow, error: string): Promise<void> {
    if (!channel.givenUp) return;
    try {
      await channel.givenUp(this.deliveryOf(row), error);
    } catch (failure) {
      this.logger.error({ outboxId: row.id, channel: row.channel, msg: `outbox channel's give-up step failed: ${(failure as Error).message}` });
    }
  }

  private deliveryOf(row: OutboxRow): OutboxDelivery<unknown> {
    return { id: row.id, payload: row.payload, attempt: row.attempts, createdAt: row.createdAt };
  }

  /** One attempt, bounded by the channel's timeout: null when delivered, `skipped` when there was nothing to send it to, otherwise what went wrong. */
  private async attempt(channel: OutboxChannel, row: OutboxRow): Promise<{ error: string; permanent: boolean } | 'skipped' | null> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new Error(`The attempt took longer than ${channel.attemptTimeoutMs} ms`));
      }, channel.attemptTimeoutMs);
    });
    try {
      const sent = await Promise.race([channel.send(this.deliveryOf(row), abort.signal), timedOut]);
      return sent === 'skipped' ? 'skipped' : null;
    } catch (error) {
      const text = channel.describeError ? channel.describeError(error) : error instanceof Error ? error.message : String(error);
      return { error: text || 'The attempt failed', permanent: error instanceof PermanentDeliveryError };
    } finally {
      clearTimeout(timer);
    }
  }
}
