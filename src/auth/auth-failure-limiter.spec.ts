import { FakeClock } from '../../test/support/fake-clock';
import { loadConfig } from '../config/app-config';
import { AUTH_FAILURE_WINDOW_MS, AuthFailureLimiter } from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  const start = 1_000_000;
  const clock = new FakeClock(start);
  /** A limiter on `clock`; `at(time)` moves the clock there and answers the limiter. */
  const limiter = () => {
    const failures = new AuthFailureLimiter(loadConfig({ AUTH_FAILURES_PER_MINUTE: '3' }), clock);
    return (time: number) => {
      clock.set(time);
      return failures;
    };
  };

  it('lets an address fail AUTH_FAILURES_PER_MINUTE times in a window, then holds it until the window ends', () => {
    const at = limiter();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(at(start).retryAfterSeconds('192.0.2.1')).toBe(0);
      at(start + attempt).record('192.0.2.1');
    }
    expect(at(start + 10).retryAfterSeconds('192.0.2.1')).toBe(60);
    expect(at(start + 59_500).retryAfterSeconds('192.0.2.1')).toBe(1);
    // Another address is not held by this one's failures.
    expect(at(start + 10).retryAfterSeconds('192.0.2.2')).toBe(0);
    expect(at(start + AUTH_FAILURE_WINDOW_MS).retryAfterSeconds('192.0.2.1')).toBe(0);
    at(start + AUTH_FAILURE_WINDOW_MS).record('192.0.2.1');
    expect(at(start + AUTH_FAILURE_WINDOW_MS).retryAfterSeconds('192.0.2.1')).toBe(0);
  });

  it('keeps at most MAX_ADDRESSES windows, dropping ended ones first, then the oldest', () => {
    const at = limiter();
    const max = AuthFailureLimiter.MAX_ADDRESSES;
    for (let index = 0; index < 3; index += 1) at(start).record('198.51.100.1');
    for (let index = 1; index < max; index += 1) at(start + AUTH_FAILURE_WINDOW_MS).record(`10.0.${index >> 8}.${index & 255}`);
    // Full: the next address makes room by dropping the window that has ended.
    at(start + AUTH_FAILURE_WINDOW_MS + 1).record('203.0.113.9');
    expect(at(start + 10).retryAfterSeconds('198.51.100.1')).toBe(0);
    for (let index = 0; index < 2; index += 1) at(start + AUTH_FAILURE_WINDOW_MS + 2).record('203.0.113.9');
    expect(at(start + AUTH_FAILURE_WINDOW_MS + 3).retryAfterSeconds('203.0.113.9')).toBe(60);
  });
});
