import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { RateLimitedError } from './rate-limited.error';
import { RateLimitStore, ThrottlerStorageRecord } from './rate-limit.store';

/** The per-key budgets a request can count against, each a limit per minute. */
export enum RateLimitBudget {
  /** API_RATE_LIMIT_PER_MINUTE: every route an API key calls, unless it names another budget. */
  API = 'api',
  /** CONFIG_RATE_LIMIT_PER_MINUTE: the config poll, OFREP and opening a change stream. */
  CONFIG = 'config',
}

interface Budget {
  limit: number;
  /** What the 429's message calls the requests of this budget. */
  noun: string;
  /** Each key id's counter key, built once: a key built per request is a new string that the counters' map must hash every time. */
  counterKeys: Map<string, string>;
}

/**
 * The one rate limiter: counts a request of an API key against one of its budgets, in the one store, and
 * answers the one 429. The lean poll, the Nest routes (through RateLimitGuard), OFREP and the stream all use it.
 */
@Injectable()
export class RateLimiter {
  /** Key ids remembered per budget with their counter key; more than this and the memo starts over. */
  static readonly MAX_KEYS = 10_000;

  private readonly budgets: Record<RateLimitBudget, Budget>;

  constructor(
    private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.budgets = {
      [RateLimitBudget.API]: { limit: config.apiRateLimitPerMinute, noun: 'requests', counterKeys: new Map() },
      [RateLimitBudget.CONFIG]: { limit: config.configRateLimitPerMinute, noun: 'config requests', counterKeys: new Map() },
    };
  }

  /** The store's key of `apiKeyId`'s counter in `budget`. */
  static counterKey(budget: RateLimitBudget, apiKeyId: string): string {
    return `${budget}:${apiKeyId}`;
  }

  limit(budget: RateLimitBudget): number {
    return this.budgets[budget].limit;
  }

  /**
   * Counts one request: synchronous on the steady path, with or without Redis (a shared window is used in
   * slices leased ahead); a Promise only while this instance waits for its next slice.
   */
  hit(budget: RateLimitBudget, apiKeyId: string): ThrottlerStorageRecord | Promise<ThrottlerStorageRecord> {
    const counted = this.budgets[budget];
    return this.store.hit(this.counterKeyOf(budget, counted, apiKeyId), counted.limit);
  }

  /** Counts one request and refuses it with the 429 once the budget is spent. */
  async take(budget: RateLimitBudget, apiKeyId: string): Promise<void> {
    const record = await this.hit(budget, apiKeyId);
    if (record.isBlocked) throw this.rejection(budget, record);
  }

  rejection(budget: RateLimitBudget, record: ThrottlerStorageRecord): RateLimitedError {
    const { limit, noun } = this.budgets[budget];
    const retryAfter = Math.max(1, record.timeToBlockExpire);
    return new RateLimitedError(`Rate limit exceeded: at most ${limit} ${noun} per minute per API key; retry after ${retryAfter} s`, retryAfter);
  }

  private counterKeyOf(budget: RateLimitBudget, counted: Budget, apiKeyId: string): string {
    let key = counted.counterKeys.get(apiKeyId);
    if (key === undefined) {
      if (counted.counterKeys.size >= RateLimiter.MAX_KEYS) counted.counterKeys.clear();
      key = RateLimiter.counterKey(budget, apiKeyId);
      counted.counterKeys.set(apiKeyId, key);
    }
    return key;
  }
}
