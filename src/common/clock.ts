import { Global, Module } from '@nestjs/common';

/** A job run every so often by a Clock; `stop` ends it. */
export interface ClockTimer {
  stop(): void;
}

/**
 * What time it is, for everything that time decides (cache and token expiry, rate-limit windows, heartbeats,
 * schedules), and the timers of the jobs that act on what has fallen due: one clock for the whole app
 * (ClockModule), which tests replace under CLOCK to move time instead of waiting for it.
 *
 * Not on it: waits that watch real I/O rather than decide anything (a lease or request timeout, a batch window,
 * a retry after a failed send, shutdown's grace), and durations measured only for logs and metrics. Those use
 * the process's own timers and Date.now(): a clock that a test stops must not stop them.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(): read on every poll, so it allocates nothing. */
  now(): number;
  /** Runs `job` every `intervalMs` of this clock until stopped; the timer never keeps the process alive. */
  every(intervalMs: number, job: () => void): ClockTimer;
}

export const CLOCK = Symbol('CLOCK');

/** The process's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  every(intervalMs, job) {
    const timer = setInterval(job, intervalMs);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

/** Provides CLOCK (the system clock) to every module: the app imports it once, and tests override it there. */
@Global()
@Module({ providers: [{ provide: CLOCK, useValue: systemClock }], exports: [CLOCK] })
export class ClockModule {}
