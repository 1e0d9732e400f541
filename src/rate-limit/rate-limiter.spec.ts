import { randomUUID } from 'node:crypto';
import { FakeClock } from '../../test/support/fake-clock';
import { RedisConnections } from '../redis/redis.module';
import { AppConfig } from '../config/app-config';
import { RateLimitBudget, RateLimiter } from './rate-limiter';
import { RATE_LIMIT_WINDOW_MS, RateLimitStore } from './rate-limit.store';

describe('RateLimiter', () => {
  const config = { configRateLimitPerMinute: 2, apiRateLimitPerMinute: 3 } as AppConfig;
  let store: RateLimitStore;
  beforeEach(() => {
    store = new RateLimitStore({} as RedisConnections, new FakeClock());
  });
  afterEach(() => store.onModuleDestroy());

  it('counts a key in the store under its budget, where a throttler guard using the store counts it too', async () => {
    const limiter = new RateLimiter(store, config);
    const keyId = randomUUID();
    expect(await limiter.hit(RateLimitBudget.CONFIG, keyId)).toMatchObject({ isBlocked: false, totalHits: 1 });
    expect(await store.increment(RateLimiter.counterKey(RateLimitBudget.CONFIG, keyId), RATE_LIMIT_WINDOW_MS, 2)).toMatchObject({
      isBlocked: false,
      totalHits: 2,
    });
    expect(await limiter.hit(RateLimitBudget.CONFIG, keyId)).toMatchObject({ isBlocked: true });
  });

  it('keeps each budget of a key apart, each with its own limit', async () => {
    const limiter = new RateLimiter(store, config);
    const keyId = randomUUID();
    await limiter.take(RateLimitBudget.CONFIG, keyId);
    await limiter.take(RateLimitBudget.CONFIG, keyId);
    await expect(limiter.take(RateLimitBudget.CONFIG, keyId)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 60,
      message: 'Rate limit exceeded: at most 2 config requests per minute per API key; retry after 60 s',
    });
    for (let request = 0; request < 3; request += 1) await limiter.take(RateLimitBudget.API, keyId);
    await expect(limiter.take(RateLimitBudget.API, keyId)).rejects.toMatchObject({
      message: 'Rate limit exceeded: at most 3 requests per minute per API key; retry after 60 s',
    });
  });

  it('keeps counting a key in its window when the ten thousand keys it remembers start over', async () => {
    const limiter = new RateLimiter(store, config);
    const keyId = randomUUID();
    expect((await limiter.hit(RateLimitBudget.CONFIG, keyId)).isBlocked).toBe(false);
    for (let index = 0; index < RateLimiter.MAX_KEYS; index++) await limiter.hit(RateLimitBudget.CONFIG, randomUUID());
    expect((await limiter.hit(RateLimitBudget.CONFIG, keyId)).isBlocked).toBe(false);
    expect((await limiter.hit(RateLimitBudget.CONFIG, keyId)).isBlocked).toBe(true);
  });
});
