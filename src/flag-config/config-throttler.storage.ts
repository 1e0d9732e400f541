import { Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { RedisConnections } from '../common/redis/redis.module';

export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  hits: number;
  resetsAt: number;
}

// INCR the window's counter, starting its expiry on the first hit; returns [hits, milliseconds left].
const INCREMENT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { hits, ttl }`;

/**
 * Fixed-window counters for the config poll limit: in memory, or in Redis (shared by every instance)
 * when REDIS_URL is set. The built-in throttler storage arms a timer per hit, which is too much for a
 * path that takes thousands of requests a second; a window here is one small object per key.
 */
@Injectable()
export class ConfigThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly redis: RedisConnections) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    if (this.redis.commands) {
      const [hits, remainingMs] = (await this.redis.commands.eval(INCREMENT_SCRIPT, 1, `flagstore:ratelimit:${key}`, ttl)) as [
        number,
        number,
      ];
      return record(hits, limit, Date.now() + remainingMs);
    }
    return this.incrementLocal(key, ttl, limit);
  }

  /** The in-memory window, synchronously: the poll's steady path avoids a promise per request. */
  incrementLocal(key: string, ttl: number, limit: number): ThrottlerStorageRecord {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetsAt <= now) {
      window = { hits: 0, resetsAt: now + ttl };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return record(window.hits, limit, window.resetsAt);
  }

  get shared(): boolean {
    return this.redis.enabled;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetsAt <= now) this.windows.delete(key);
  }
}

function record(hits: number, limit: number, resetsAt: number): ThrottlerStorageRecord {
  const secondsLeft = Math.max(1, Math.ceil((resetsAt - Date.now()) / 1000));
  const isBlocked = hits > limit;
  return { totalHits: hits, timeToExpire: secondsLeft, isBlocked, timeToBlockExpire: isBlocked ? secondsLeft : 0 };
}
