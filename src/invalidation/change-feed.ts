import { BeforeApplicationShutdown, Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { Sql } from '../database/sql';
import { InvalidationBus } from './invalidation-bus';

/** How a source's rows are read: every change since the last read, or (`full`) everything it needs from nothing. */
export interface FeedRead {
  /** The first read, or one after the database went back in time (restored, replaced): start over. */
  full: boolean;
}

/**
 * One kind of change the feed reads for an in-memory cache (the live API keys, the config versions).
 * `sql` is a scalar subquery answering a JSON array of rows, with two parameters: `$1`, an xid8 (the rows changed by
 * a transaction whose id is at least it: a `changed_xid` column set with `pg_current_xact_id()` in the change's
 * transaction, with an index), and `$2`, true on a full read. A source may instead read a small current value every
 * time (the earliest pending schedule: one step of an index). `apply` gets the rows of each read, one read at a time,
 * in the order the reads were made.
 */
export interface ChangeSource<Row = unknown> {
  readonly sql: string;
  apply(rows: Row[], read: FeedRead): void;
}

interface FeedRow {
  xmin: string;
  xmax: string;
  [source: `s${number}`]: unknown[];
}

/**
 * The invalidation bus tells every instance about a change at once, but cannot promise that no message is lost (a
 * subscription that dropped, an instance that died between its commit and its announcement). The change feed covers
 * that gap at a cost that grows with changes only: one statement reads, for every registered source, the rows changed
 * since the previous read, through an index on the changing transaction's id. It remembers its snapshot's xmin: every
 * transaction with a lower id had ended when it read, so it saw all of their changes, and every change it did not see
 * has an id at least that (its transaction was running, or had not begun). Rows read again (while an old transaction
 * holds xmin back) are applied again, which the sources make harmless.
 *
 * It reads every PERIOD_MS on each instance, whatever the number of organizations, keys or polls (the gap cover: a
 * change whose message was lost is seen within it), at once when the bus had to resubscribe, and on demand through
 * `catchUp` (an API key no index holds): a read that starts after the call, shared by every caller waiting, at most
 * one per CATCH_UP_SPACING_MS.
 *
 * A read that fails (the database away) changes nothing; waiting callers get its error, and the next read resumes
 * from the same place. Nothing commits on a database that cannot be read, so the caches stay as true as they were.
 */
@Injectable()
export class ChangeFeed implements OnApplicationBootstrap, BeforeApplicationShutdown {
  static readonly PERIOD_MS = 3_000;
  static readonly CATCH_UP_SPACING_MS = 1_000;

  private readonly logger = new Logger(ChangeFeed.name);
  private readonly sources: ChangeSource[] = [];
  /** The xmin of the last read's snapshot (an xid8, as text); null until the first read (a full one). */
  private since: string | null = null;
  private inFlight: Promise<void> | null = null;
  /** The catch-up read callers are waiting for, before it starts. */
  private waiting: Promise<void> | null = null;
  /** Ends the wait of `waiting` at once (shutdown). */
  private wake: (() => void) | null = null;
  /** When the last read started (process time, ms): paces catch-ups and the periodic read. */
  private lastStartedAt = -Infinity;
  private failing = false;
  private timer: ClockTimer | null = null;
  private stopped = false;
  private reads = 0;

  constructor(
    private readonly sql: Sql,
    bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    bus.onReset(() => void this.catchUp().catch(() => undefined));
  }

  /** Reads `source`'s changes from now on; sources register while the app is built (constructors), before the first read. */
  register<Row>(source: ChangeSource<Row>): void {
    this.sources.push(source as ChangeSource);
  }

  /** The first read, before the app serves (the key index must hold every live key), then the periodic ones. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.sources.length === 0) return; // the CLI: nothing in memory to keep true
    await this.tick().catch(() => undefined);
    this.timer = this.clock.every(ChangeFeed.PERIOD_MS, () => this.periodic());
  }

  /** No read starts once shutdown begins (requests have drained by then), and the one in flight ends before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.timer?.stop();
    this.timer = null;
    this.wake?.();
    await this.waiting?.catch(() => undefined);
    await this.inFlight?.catch(() => undefined);
  }

  /** Reads completed since start, for tests and the metric. */
  get readCount(): number {
    return this.reads;
  }

  /**
   * A read that starts after this call (after the one in flight, if any), shared by every caller until it starts, and
   * no sooner than CATCH_UP_SPACING_MS after the previous one started: what a request waits for when its key is not
   * in the index, so that a flood of made-up keys costs at most one read a second.
   */
  catchUp(): Promise<void> {
    this.waiting ??= (async () => {
      await this.inFlight?.catch(() => undefined);
      const wait = this.lastStartedAt + ChangeFeed.CATCH_UP_SPACING_MS - performance.now();
      if (wait > 0 && !this.stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      this.wake = null;
      this.waiting = null;
      return this.read();
    })();
    return this.waiting;
  }

  /** A read now, or right after the one in flight: the periodic job, and what tests call once they moved the clock. */
  async tick(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    return this.read();
  }

  /** The timer's job: skipped when a read started less than a spacing ago or is about to. */
  private periodic(): void {
    if (this.waiting || this.inFlight || performance.now() - this.lastStartedAt < ChangeFeed.CATCH_UP_SPACING_MS) return;
    this.tick().catch(() => undefined);
  }

  private read(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.inFlight) return this.inFlight.catch(() => undefined).then(() => this.read());
    this.lastStartedAt = performance.now();
    const done = () => {
      this.inFlight = null;
    };
    this.inFlight = this.readChanges().then(done, (error: unknown) => {
      done();
      throw error;
    });
    return this.inFlight;
  }

  private async readChanges(): Promise<void> {
    try {
      let full = this.since === null;
      let row = await this.query(this.since ?? '0', full);
      // The database's transaction ids went back (a restored or replaced cluster): what was read before means nothing.
      if (!full && BigInt(row.xmax) < BigInt(this.since!)) {
        this.logger.warn('The database went back in time: reading every cached thing again');
        full = true;
        row = await this.query('0', true);
      }
      this.sources.forEach((source, index) => source.apply(row[`s${index}`], { full }));
      this.since = row.xmin;
      this.reads += 1;
      if (this.failing) this.logger.log('The change feed reads again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`The change feed could not read: ${String(error)}`);
      this.failing = true;
      throw error;
    }
  }

  private async query(since: string, full: boolean): Promise<FeedRow> {
    const columns = this.sources.map((source, index) => `(${source.sql}) AS s${index}`).join(', ');
    const row = await this.sql.row<FeedRow>(
      `WITH snapshot AS (SELECT pg_current_snapshot() AS current, $1::xid8 AS since, $2::boolean AS full_read)
       SELECT pg_snapshot_xmin(current)::text AS xmin, pg_snapshot_xmax(current)::text AS xmax, ${columns} FROM snapshot`,
      [since, full],
    );
    return row!;
  }
}

/** The change feed, for every module that keeps something in memory. */
@Global()
@Module({ providers: [ChangeFeed], exports: [ChangeFeed] })
export class ChangeFeedModule {}
