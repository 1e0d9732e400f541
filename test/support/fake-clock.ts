import type { Clock, ClockTimer } from '../../src/common/clock';

/**
 * A clock that moves only when told: schedules, expiries and heartbeats fall due when a test says so, not after
 * real minutes. The jobs the app sets on it (the scheduler's tick, the stream hub's beat, the sweepers) never run
 * by themselves: a test moves the time, then calls the job it means to run (FlagScheduler.tick,
 * ConfigStreamHub.beat, ChangeFeed.tick), so nothing runs behind its back with a time it has not finished setting.
 */
export class FakeClock implements Clock {
  constructor(private time: number = Date.now()) {}

  now(): number {
    return this.time;
  }

  /** The current time as a Date (ISO strings, `at` of a schedule). */
  date(): Date {
    return new Date(this.time);
  }

  advance(ms: number): void {
    this.time += ms;
  }

  set(instant: Date | number): void {
    this.time = typeof instant === 'number' ? instant : instant.getTime();
  }

  /** The intervals of the jobs the app set on this clock (ms), so a test can check how often each would run. */
  readonly intervals: number[] = [];

  every(intervalMs: number): ClockTimer {
    this.intervals.push(intervalMs);
    return { stop: () => undefined };
  }
}
