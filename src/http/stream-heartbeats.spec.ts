import { systemClock } from '../common/clock';
import { STREAM_LIFETIME_MS } from './sse-frames';
import { dueOf, HEARTBEAT_MS, startTicking, TICK_MS } from './stream-heartbeats';

describe('stream heartbeats', () => {
  const openedAt = Date.parse('2026-12-04T18:00:00Z');

  it('owes a stream a heartbeat 15 s after its own last write, and nothing before', () => {
    const wroteAt = openedAt + 7_000;
    expect(HEARTBEAT_MS).toBe(15_000);
    expect(dueOf({ openedAt, wroteAt }, wroteAt)).toBeNull();
    expect(dueOf({ openedAt, wroteAt }, wroteAt + HEARTBEAT_MS - 1)).toBeNull();
    expect(dueOf({ openedAt, wroteAt }, wroteAt + HEARTBEAT_MS)).toBe('heartbeat');
    expect(dueOf({ openedAt, wroteAt }, wroteAt + 3 * HEARTBEAT_MS)).toBe('heartbeat');
  });

  it('spreads heartbeats out: streams written at different times are due at different times', () => {
    const now = openedAt + 20_000;
    const early = { openedAt, wroteAt: now - HEARTBEAT_MS };
    const late = { openedAt, wroteAt: now - HEARTBEAT_MS + 4_000 };
    expect([dueOf(early, now), dueOf(late, now)]).toEqual(['heartbeat', null]);
    expect(dueOf(late, now + 4_000)).toBe('heartbeat');
  });

  it('owes a stream past its lifetime its end rather than a heartbeat', () => {
    expect(dueOf({ openedAt, wroteAt: openedAt }, openedAt + STREAM_LIFETIME_MS - 1)).toBe('heartbeat');
    expect(dueOf({ openedAt, wroteAt: openedAt }, openedAt + STREAM_LIFETIME_MS)).toBe('end');
    expect(dueOf({ openedAt, wroteAt: openedAt + STREAM_LIFETIME_MS }, openedAt + STREAM_LIFETIME_MS)).toBe('end');
  });

  it('ticks every second on a timer that does not keep the process alive', () => {
    jest.useFakeTimers();
    try {
      const tick = jest.fn();
      const interval = jest.spyOn(global, 'setInterval');
      const timer = startTicking(systemClock, tick);
      expect((interval.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
      jest.advanceTimersByTime(3 * TICK_MS);
      expect(tick).toHaveBeenCalledTimes(3);
      timer.stop();
      interval.mockRestore();
    } finally {
      jest.useRealTimers();
    }
  });
});
