import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { RedisConnections } from '../common/redis/redis.module';
import { RedisLeaseStore } from './lease-store';
import { SharedLimiter, ThrottlerStorageRecord } from './shared-limiter';

export type { ThrottlerStorageRecord } from './shared-limiter';

/** The config poll's fixed window. */
export const CONFIG_WINDOW_MS = 60_000;

/**
 * The config poll's counters for both paths: the lean poll (through ConfigRateLimiter) and @nestjs/throttler's
 * guard on the Nest route, so that both count against one budget per key. In memory, or shared by every
 * instance through Redis when REDIS_URL is set, in slices leased from Redis (see SharedLimiter) so that a poll
 * does not wait for Redis. The built-in throttler storage arms a timer per hit, which is too much for a path
 * that takes thousands of requests a second.
 */
@Injectable()
export class ConfigThrottlerStorage implements ThrottlerStorage, OnModuleDestroy {
  readonly limiter: SharedLimiter;
  private readonly sweeper: NodeJS.Timeout;

  constructor(redis: RedisConnections) {
    this.limiter = new SharedLimiter({
      store: redis.commands ? new RedisLeaseStore(redis.commands) : undefined,
      windowMs: CONFIG_WINDOW_MS,
      logger: new Logger('ConfigRateLimit'),
    });
    this.sweeper = setInterval(() => this.limiter.sweep(), CONFIG_WINDOW_MS);
    this.sweeper.unref();
  }

  /** The guard's entry; every throttler of this storage has the config window, so `ttl` is CONFIG_WINDOW_MS. */
  async increment(key: string, _ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    return this.limiter.hit(key, limit);
  }

  /** Counts one hit; synchronous except when this instance's slice of a shared window is empty. */
  hit(key: string, limit: number): ThrottlerStorageRecord | Promise<ThrottlerStorageRecord> {
    return this.limiter.hit(key, limit);
  }

  get shared(): boolean {
    return this.limiter.shared;
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
