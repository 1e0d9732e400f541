import { Logger } from '@nestjs/common';
import { Clock, ClockTimer } from '../../common/clock';
import { ChangeFeed } from '../../invalidation/change-feed';

export interface DueWorkOptions<T> {
  /** What the work is called in the log ("Scheduled changes"). */
  name: string;
  /** The change feed's statement for when the earliest pending item falls due (one column: an ISO time, or null). */
  nextDueSql: string;
  /** Applies what is due at `now`: claims each item in the transaction that applies it, so every instance may run. */
  applyDue(now: Date): Promise<T[]>;
  /** Reads when the earliest pending item falls due, after a run. */
  readNextDue(): Promise<Date | null>;
}

/**
 * The claim loop a scheduler runs on every instance (flag schedules, change requests' `applyAt`): a timer on the app's
 * clock ticks every `tickMs`, and a tick costs nothing until the earliest pending item falls due. That time is read by
 * the change feed with everything else it reads (every ChangeFeed.PERIOD_MS, the first time before the app serves) and
 * after each run, and learnt at once from items made on this instance (`scheduled`), which a feed read that began
 * before they committed did not see. Concurrent runs share one; a failing run (the database away) is said once and
 * tried again each tick while something is due.
 */
export class DueWork<T> {
  private timer: ClockTimer | null = null;
  private running: Promise<T[]> | null = null;
  private failing = false;
  /** When the earliest pending item falls due (ms, clock time), null for none. */
  private nextDueAt: number | null = null;
  /** The earliest item made here since the last run. */
  private madeHere: number | null = null;

  constructor(
    private readonly options: DueWorkOptions<T>,
    feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    feed.register<string | null>({ sql: options.nextDueSql, apply: ([at]) => this.heardNextDue(at) });
  }

  /** Whether its timer runs: started, and not stopped (a run in progress yields once it is not). */
  get active(): boolean {
    return this.timer !== null;
  }

  start(tickMs: number): void {
    this.timer = this.clock.every(tickMs, () => void this.tick());
  }

  async stop(): Promise<void> {
    this.timer?.stop();
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Applies what is due at the clock's time, then reads when the next one falls due. Concurrent calls share one run. */
  runDue(): Promise<T[]> {
    this.running ??= this.options
      .applyDue(new Date(this.clock.now()))
      .then(async (outcomes) => {
        this.madeHere = null;
        const next = await this.options.readNextDue();
        this.nextDueAt = next?.getTime() ?? null;
        return outcomes;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** An item was made (or became due) here at `at`: known without waiting for the next read. */
  scheduled(at: Date): void {
    this.madeHere = earliest(this.madeHere, at.getTime());
    this.nextDueAt = earliest(this.nextDueAt, at.getTime());
  }

  /**
   * What the clock's timer runs: applies what is due, if anything is. Tests that hold the clock call it after moving
   * the time; it never throws.
   */
  async tick(): Promise<void> {
    if (this.nextDueAt === null || this.nextDueAt > this.clock.now()) return;
    try {
      await this.runDue();
      if (this.failing) this.logger.log(`${this.options.name} apply again`);
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`${this.options.name} wait: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  /** What the change feed read: the earliest pending item of every instance (ISO time, or null for none). */
  private heardNextDue(at: string | null): void {
    this.nextDueAt = earliest(at === null ? null : new Date(at).getTime(), this.madeHere);
  }
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null || a <= b ? a : b;
}
