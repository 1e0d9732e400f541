import { randomUUID } from 'node:crypto';
import { RedisConnections } from '../common/redis/redis.module';
import { AppConfig } from '../config/app-config';
import { ConfigRateLimiter } from './config-rate-limiter';
import { ConfigThrottlerStorage } from './config-throttler.storage';

describe('ConfigRateLimiter', () => {
  const config = { configRateLimitPerMinute: 2 } as AppConfig;
  let storage: ConfigThrottlerStorage;
  beforeEach(() => {
    storage = new ConfigThrottlerStorage({} as RedisConnections);
  });
  afterEach(() => storage.onModuleDestroy());

  it('counts a key against the window that the Nest route\'s guard counts it in', async () => {
    const limiter = new ConfigRateLimiter(storage, config);
    const keyId = randomUUID();
    expect(await limiter.hit(keyId)).toMatchObject({ isBlocked: false, totalHits: 1 });
    expect(await storage.increment(ConfigRateLimiter.keyFor(keyId), 60_000, 2)).toMatchObject({ isBlocked: false, totalHits: 2 });
    expect(await limiter.hit(keyId)).toMatchObject({ isBlocked: true });
  });

  it('keeps counting a key in its window when the ten thousand keys it remembers start over', async () => {
    const limiter = new ConfigRateLimiter(storage, config);
    const keyId = randomUUID();
    expect((await limiter.hit(keyId)).isBlocked).toBe(false);
    for (let index = 0; index < 10_000; index++) await limiter.hit(randomUUID());
    expect((await limiter.hit(keyId)).isBlocked).toBe(false);
    expect((await limiter.hit(keyId)).isBlocked).toBe(true);
  });
});
