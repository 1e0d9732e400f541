import { MAIL_RETRY } from '../mail/mail-channel';
import { afterFailure, RetryPolicy } from './retry-policy';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-11-29T00:00:00Z');

const policy: RetryPolicy = { delaysMs: [10_000, MINUTE, HOUR], windowMs: 5 * HOUR, jitter: 0.2 };
const middle = () => 0.5;

describe('afterFailure', () => {
  it('waits each delay in turn after the 1st, 2nd, ... attempt, then repeats the last', () => {
    const at = (attempts: number) => afterFailure(policy, { attempts, createdAt: T0 }, T0 + MINUTE, middle);
    expect(at(1)).toEqual({ retryAt: T0 + MINUTE + 10_000 });
    expect(at(2)).toEqual({ retryAt: T0 + 2 * MINUTE });
    expect(at(3)).toEqual({ retryAt: T0 + MINUTE + HOUR });
    expect(at(7)).toEqual({ retryAt: T0 + MINUTE + HOUR });
  });

  it('draws each wait within ±jitter of its delay', () => {
    expect(afterFailure(policy, { attempts: 2, createdAt: T0 }, T0, () => 0)).toEqual({ retryAt: T0 + 0.8 * MINUTE });
    expect(afterFailure(policy, { attempts: 2, createdAt: T0 }, T0, () => 0.999999)).toEqual({ retryAt: T0 + 72_000 });
    const waits = Array.from({ length: 200 }, () => (afterFailure(policy, { attempts: 2, createdAt: T0 }, T0) as { retryAt: number }).retryAt - T0);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0.8 * MINUTE);
    expect(Math.max(...waits)).toBeLessThanOrEqual(1.2 * MINUTE);
    // Spread, not one value: rows that failed together come back apart.
    expect(new Set(waits).size).toBeGreaterThan(100);
  });

  it('gives up when the next attempt would start after the window, counted from when the row was written', () => {
    expect(afterFailure(policy, { attempts: 5, createdAt: T0 }, T0 + 4 * HOUR - 1, middle)).toEqual({ retryAt: T0 + 5 * HOUR - 1 });
    expect(afterFailure(policy, { attempts: 5, createdAt: T0 }, T0 + 4 * HOUR + 1, middle)).toEqual({ giveUp: true });
  });

  it('gives up after maxAttempts when the policy counts them (the webhooks schedule)', () => {
    const counted: RetryPolicy = { ...policy, windowMs: 1000 * HOUR, maxAttempts: 3 };
    expect(afterFailure(counted, { attempts: 2, createdAt: T0 }, T0, middle)).toEqual({ retryAt: T0 + MINUTE });
    expect(afterFailure(counted, { attempts: 3, createdAt: T0 }, T0, middle)).toEqual({ giveUp: true });
  });

  it('tries mail for 24 hours: about 17 attempts of a server that never answers, the last one within the day', () => {
    for (const random of [() => 0, middle, () => 0.999999]) {
      let now = T0;
      let attempts = 1;
      for (;;) {
        const next = afterFailure(MAIL_RETRY, { attempts, createdAt: T0 }, now, random);
        if ('giveUp' in next) break;
        now = next.retryAt;
        attempts += 1;
      }
      expect(now).toBeLessThanOrEqual(T0 + 24 * HOUR);
      // The next wait (at most 2 h 24 min) would have passed the day.
      expect(now).toBeGreaterThan(T0 + 24 * HOUR - 1.2 * 2 * HOUR);
      expect(attempts).toBeGreaterThanOrEqual(13);
      expect(attempts).toBeLessThanOrEqual(22);
    }
    // The first retry comes soon (a server restarting), within a minute.
    expect(afterFailure(MAIL_RETRY, { attempts: 1, createdAt: T0 }, T0, middle)).toEqual({ retryAt: T0 + 30_000 });
  });
});
