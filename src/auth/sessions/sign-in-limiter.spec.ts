import type { IncomingMessage } from 'node:http';
import { FakeClock } from '../../../test/support/fake-clock';
import { loadConfig } from '../../config/app-config';
import { RateLimitedError } from '../../rate-limit/rate-limited.error';
import { RedisConnections } from '../../redis/redis.module';
import { ADDRESS_WINDOW_MS, EMAIL_FAILURES, EMAIL_WINDOW_MS, SignInLimiter } from './sign-in-limiter';

/** SignInLimiter in memory (no REDIS_URL): what the sign-in routes rely on; the shared path is tested in test/e2e/people-identity. */
describe('SignInLimiter (per instance)', () => {
  const clock = new FakeClock(1_000_000);
  const limiter = () => new SignInLimiter(loadConfig({ SIGN_IN_FAILURES_PER_MINUTE: '3' }), clock, { commands: undefined } as RedisConnections);
  const from = (address: string) => ({ socket: { remoteAddress: address }, headers: {} }) as unknown as IncomingMessage;
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error as RateLimitedError,
    );

  it('takes an attempt before the work, and refuses the one past the budget at once, with Retry-After', async () => {
    const limits = limiter();
    for (let i = 0; i < 3; i += 1) await limits.take(from('192.0.2.1'), `user${i}@a.example`);
    const refused = await refusal(limits.take(from('192.0.2.1'), 'other@a.example'));
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused!.message).toMatch(/3 failed sign-ins a minute from this address/);
    expect(refused!.retryAfterSeconds).toBe(ADDRESS_WINDOW_MS / 1000);
    clock.advance(ADDRESS_WINDOW_MS);
    await limits.take(from('192.0.2.1'), 'other@a.example');
  });

  it('gives a success its attempt back, once, and only to the window it was taken from', async () => {
    const limits = limiter();
    const attempt = await limits.take(from('192.0.2.2'));
    await attempt.giveBack();
    await attempt.giveBack(); // twice is once
    for (let i = 0; i < 3; i += 1) await limits.take(from('192.0.2.2'));
    expect(await refusal(limits.take(from('192.0.2.2')))).toBeInstanceOf(RateLimitedError);

    // Taken in one window, given back in the next: the new window is not credited.
    const late = await limits.take(from('192.0.2.3'));
    clock.advance(ADDRESS_WINDOW_MS);
    for (let i = 0; i < 2; i += 1) await limits.take(from('192.0.2.3'));
    await late.giveBack();
    await limits.take(from('192.0.2.3'));
    expect(await refusal(limits.take(from('192.0.2.3')))).toBeInstanceOf(RateLimitedError);
  });

  it('counts an email across addresses, and a refusal by the email takes nothing from the address', async () => {
    const limits = limiter();
    for (let i = 0; i < EMAIL_FAILURES; i += 1) await limits.take(from(`198.51.100.${i}`), 'alice@a.example');
    const refused = await refusal(limits.take(from('203.0.113.1'), 'alice@a.example'));
    expect(refused!.message).toMatch(/10 failed sign-ins for this email in 15 minutes/);
    expect(refused!.retryAfterSeconds).toBe(EMAIL_WINDOW_MS / 1000);
    // Another spelling is another email; the address refused above still has its whole budget.
    for (let i = 0; i < 3; i += 1) await limits.take(from('203.0.113.1'), 'alİce@a.example');
  });
});
