import type { Scheduler } from '../../src';

interface Timer {
  id: number;
  due: number;
  delay: number;
  callback: () => void;
}

/**
 * A scheduler whose time moves only when a test says so: the client's poll interval, backoff, Retry-After and
 * reconnect waits become timers the test inspects (`pending()`) and fires (`runNext()`, `advance()`), while the
 * HTTP the client does in between is real.
 */
export class ManualScheduler implements Scheduler {
  private time: number;
  private timers: Timer[] = [];
  private nextId = 1;
  private waiters: Array<(timer: { delay: number }) => void> = [];

  constructor(start = Date.UTC(2030, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delay: number): unknown {
    const timer = { id: this.nextId++, due: this.time + delay, delay, callback };
    this.timers.push(timer);
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter({ delay });
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  /** How long each timer still waiting has left, soonest first. */
  pending(): number[] {
    return this.sorted().map((timer) => timer.due - this.time);
  }

  /** Resolves with the next timer the client sets (from now on). */
  nextTimer(): Promise<{ delay: number }> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Moves time to the soonest timer and fires it; returns the delay it had been set with. */
  runNext(): number {
    const [timer] = this.sorted();
    if (!timer) throw new Error('no timer is pending');
    this.timers = this.timers.filter((other) => other !== timer);
    this.time = Math.max(this.time, timer.due);
    timer.callback();
    return timer.delay;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const [timer] = this.sorted();
      if (!timer || timer.due > end) break;
      this.timers = this.timers.filter((other) => other !== timer);
      this.time = timer.due;
      timer.callback();
    }
    this.time = end;
  }

  private sorted(): Timer[] {
    return [...this.timers].sort((a, b) => a.due - b.due || a.id - b.id);
  }
}
