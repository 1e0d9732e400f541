import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { Counter } from 'prom-client';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { RedisConnections } from '../redis/redis.module';
import { Metrics } from '../metrics/metrics';
import { RedisLeaseStore } from './lease-store';
import { SharedLimiter, ThrottlerStorageRecord } from './shared-limiter';

export type { ThrottlerStorageRecord } from './shared-limiter';

/** Every budget counts in windows of a minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * The counters of every per-key budget (see RateLimiter), as a @nestjs/throttler storage: in memory, or shared
 * by every instance through Redis when REDIS_URL is set, in slices leased from Redis (see SharedLimiter) so that
 * a request does not wait for Redis. The built-in throttler storage arms a timer per hit, which is too much for
 * the config poll, which takes thousands of requests a second.
 */
@Injectable()
export class RateLimitStore implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  readonly limiter: SharedLimiter;
  private readonly sweeper: ClockTimer;

  constructor(
    redis: RedisConnections,
    @Inject(CLOCK) clock: Clock,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.limiter = new SharedLimiter({
      store: redis.commands ? new RedisLeaseStore(redis.commands) : undefined,
      windowMs: RATE_LIMIT_WINDOW_MS,
      clock,
      logger: new Logger('RateLimit'),
    });
    this.sweeper = clock.every(RATE_LIMIT_WINDOW_MS, () => this.limiter.sweep());
  }

  /** The throttler storage's entry; every budget has the same window, so `ttl` is RATE_LIMIT_WINDOW_MS. */
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

  /** The limiter's Redis fallback, read into the app's registry at scrape time. */
  onModuleInit(): void {
    const registry = this.metrics?.registry;
    if (!registry) return;
    const limiter = this.limiter;
    new Counter({
      name: 'flagstore_rate_limit_fallback_hits_total',
      help: 'Rate-limited requests (every budget) counted on this instance alone because the shared limiter store (Redis) was unavailable',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(limiter.fallbackHits);
      },
    });
    new Counter({
      name: 'flagstore_rate_limit_store_outages_total',
      help: 'Times the shared limiter store (Redis) became unavailable',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(limiter.outages);
      },
    });
  }

  onModuleDestroy(): void {
    this.sweeper.stop();
  }
}
