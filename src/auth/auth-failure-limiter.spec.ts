import { loadConfig } from '../config/app-config';
import { AUTH_FAILURE_WINDOW_MS, AuthFailureLimiter } from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  const limiter = () => new AuthFailureLimiter(loadConfig({ AUTH_FAILURES_PER_MINUTE: '3' }));
  const start = 1_000_000;

  it('lets an address fail AUTH_FAILURES_PER_MINUTE times in a window, then holds it until the window ends', () => {
    const failures = limiter();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(failures.retryAfterSeconds('192.0.2.1', start)).toBe(0);
      failures.record('192.0.2.1', start + attempt);
    }
    expect(failures.retryAfterSeconds('192.0.2.1', start + 10)).toBe(60);
    expect(failures.retryAfterSeconds('192.0.2.1', start + 59_500)).toBe(1);
    // Another address is not held by this one's failures.
    expect(failures.retryAfterSeconds('192.0.2.2', start + 10)).toBe(0);
    expect(failures.retryAfterSeconds('192.0.2.1', start + AUTH_FAILURE_WINDOW_MS)).toBe(0);
    failures.record('192.0.2.1', start + AUTH_FAILURE_WINDOW_MS);
    expect(failures.retryAfterSeconds('192.0.2.1', start + AUTH_FAILURE_WINDOW_MS)).toBe(0);
  });

  it('forgives a request counted up front whose key was valid', () => {
    const failures = limiter();
    for (let attempt = 0; attempt < 3; attempt += 1) failures.record('192.0.2.1', start);
    failures.forgive('192.0.2.1', start + 1);
    expect(failures.retryAfterSeconds('192.0.2.1', start + 2)).toBe(0);
    failures.record('192.0.2.1', start + 3);
    expect(failures.retryAfterSeconds('192.0.2.1', start + 4)).toBe(60);
  });

  it('keeps at most MAX_ADDRESSES windows, dropping ended ones first, then the oldest', () => {
    const failures = limiter();
    const max = AuthFailureLimiter.MAX_ADDRESSES;
    for (let index = 0; index < 3; index += 1) failures.record('198.51.100.1', start);
    for (let index = 1; index < max; index += 1) failures.record(`10.0.${index >> 8}.${index & 255}`, start + AUTH_FAILURE_WINDOW_MS);
    // Full: the next address makes room by dropping the window that has ended.
    failures.record('203.0.113.9', start + AUTH_FAILURE_WINDOW_MS + 1);
    expect(failures.retryAfterSeconds('198.51.100.1', start + 10)).toBe(0);
    for (let index = 0; index < 2; index += 1) failures.record('203.0.113.9', start + AUTH_FAILURE_WINDOW_MS + 2);
    expect(failures.retryAfterSeconds('203.0.113.9', start + AUTH_FAILURE_WINDOW_MS + 3)).toBe(60);
  });
});
