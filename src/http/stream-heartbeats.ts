import type { Clock, ClockTimer } from '../common/clock';
import { hasOutlived } from './sse-frames';

/**
 * A stream that has been silent this long gets a comment line, well inside the 60 s of silence after which
 * the proxy in front (docker/nginx.conf) drops it.
 */
export const HEARTBEAT_MS = 15_000;
/** How often the one timer looks for streams due a heartbeat or past their lifetime. */
export const TICK_MS = 1_000;

/** What the timer reads of a stream. */
export interface TimedStream {
  readonly openedAt: number;
  /** When something was last written to it. */
  readonly wroteAt: number;
}

/**
 * What the timer owes a stream as of `now`: its end, once it has outlived its lifetime; a heartbeat, once it
 * has been silent HEARTBEAT_MS since its own last write (so streams opened or written at different times get
 * theirs at different ticks, not all at once); otherwise nothing.
 */
export function dueOf(stream: TimedStream, now: number): 'end' | 'heartbeat' | null {
  if (hasOutlived(stream.openedAt, now)) return 'end';
  if (stream.wroteAt <= now - HEARTBEAT_MS) return 'heartbeat';
  return null;
}

/** The one timer for every stream: `tick` every TICK_MS of the clock; it does not keep the process alive. */
export function startTicking(clock: Clock, tick: () => void): ClockTimer {
  return clock.every(TICK_MS, tick);
}
