import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { CLOCK, Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { FixedWindowCounter, secondsUntil } from '../../rate-limit/fixed-window';
import { RateLimitedError } from '../../rate-limit/rate-limited.error';
import { RedisConnections } from '../../redis/redis.module';
import { clientAddressResolver } from '../client-address';

/** Sign-in attempts one email may have in EMAIL_WINDOW_MS (successful ones are given back). */
export const EMAIL_FAILURES = 10;
export const EMAIL_WINDOW_MS = 15 * 60_000;
export const ADDRESS_WINDOW_MS = 60_000;
const MAX_TRACKED = 100_000;

/** An attempt taken from the budgets: a successful sign-in gives it back. */
export interface SignInAttempt {
  giveBack(): Promise<void>;
}

interface Budget {
  kind: 'address' | 'email';
  limit: number;
  windowMs: number;
  local: FixedWindowCounter;
  refusal(wait: number): string;
}

/** A token taken from one budget's window: where it was counted, so that it goes back there. */
interface Taken {
  budget: Budget;
  key: string;
  resetsAt: number;
  shared: boolean;
}

/**
 * KEYS[1]: the window, a hash {e: its end, u: attempts taken in it}. ARGV: now, windowMs, limit.
 * Takes one attempt when the window has one left: {1, end}; else {0, end}. A window starts with the first attempt at
 * or after the previous one's end (fixed windows anchored at first use, as in memory); the caller's clock is used.
 */
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local w = redis.call('HMGET', KEYS[1], 'e', 'u')
local ends = tonumber(w[1])
local used = tonumber(w[2]) or 0
if (not ends) or ends <= now then
  ends = now + tonumber(ARGV[2])
  used = 0
  redis.call('HSET', KEYS[1], 'e', string.format('%d', ends), 'u', 0)
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
if used >= tonumber(ARGV[3]) then return { 0, string.format('%d', ends) } end
redis.call('HINCRBY', KEYS[1], 'u', 1)
return { 1, string.format('%d', ends) }`;

/** KEYS[1]: the window; ARGV[1]: the end of the window the attempt was taken from. Gives it back to that window only. */
const GIVE_BACK_SCRIPT = `
local w = redis.call('HMGET', KEYS[1], 'e', 'u')
if w[1] == ARGV[1] and (tonumber(w[2]) or 0) > 0 then redis.call('HINCRBY', KEYS[1], 'u', -1) end
return 0`;

/**
 * Sign-in attempts, counted per email (EMAIL_FAILURES per 15 minutes: one account cannot be guessed at from many
 * addresses) and per client address (SIGN_IN_FAILURES_PER_MINUTE: one address cannot try many accounts, nor many
 * invitation links), apart from the API keys' and the admin token's budget. An attempt is taken (atomically) before
 * any password is hashed, so that attempts sent at once cannot all pass a check made before any of them was counted;
 * a refused attempt takes nothing and costs no hashing, and a successful one gives its attempt back.
 *
 * With REDIS_URL the windows are shared by every instance (one script per attempt: an attempt costs a password hash
 * anyway), under REDIS_PREFIX, keyed by a hash of the email or address. Without Redis, or while it does not answer,
 * each instance counts in memory (a budget is then at most N times as large behind N instances), and says so once
 * per outage.
 */
@Injectable()
export class SignInLimiter {
  private readonly logger = new Logger(SignInLimiter.name);
  private readonly byEmail: Budget;
  private readonly byAddress: Budget;
  private readonly addressOf: (request: IncomingMessage) => string;
  private readonly redis?: Redis;
  private readonly prefix: string;
  private down = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    redis: RedisConnections,
  ) {
    const addressLimit = config.signInFailuresPerMinute;
    this.byAddress = {
      kind: 'address',
      limit: addressLimit,
      windowMs: ADDRESS_WINDOW_MS,
      local: new FixedWindowCounter(ADDRESS_WINDOW_MS, MAX_TRACKED),
      refusal: (wait) => `More than ${addressLimit} failed sign-ins a minute from this address; retry after ${wait} s`,
    };
    this.byEmail = {
      kind: 'email',
      limit: EMAIL_FAILURES,
      windowMs: EMAIL_WINDOW_MS,
      local: new FixedWindowCounter(EMAIL_WINDOW_MS, MAX_TRACKED),
      refusal: (wait) => `More than ${EMAIL_FAILURES} failed sign-ins for this email in 15 minutes; retry after ${wait} s`,
    };
    this.addressOf = clientAddressResolver(config.trustProxy);
    this.redis = redis.commands;
    this.prefix = `flagstore:signin:${config.redisPrefix ? `${config.redisPrefix}:` : ''}`;
  }

  /**
   * Takes one attempt from the request address's budget and, given an email (in its normal form), from the email's:
   * 429 when either is spent, and then neither is taken.
   */
  async take(request: IncomingMessage, email?: string): Promise<SignInAttempt> {
    const taken: Taken[] = [];
    const steps: [Budget, string][] = [[this.byAddress, this.addressOf(request)]];
    if (email !== undefined) steps.push([this.byEmail, email]);
    for (const [budget, value] of steps) {
      const outcome = await this.takeFrom(budget, value);
      if ('refused' in outcome) {
        await Promise.all(taken.map((token) => this.giveBack(token)));
        throw new RateLimitedError(budget.refusal(outcome.refused), outcome.refused);
      }
      taken.push(outcome);
    }
    let given = false;
    return {
      giveBack: async () => {
        if (given) return;
        given = true;
        await Promise.all(taken.map((token) => this.giveBack(token)));
      },
    };
  }

  private async takeFrom(budget: Budget, value: string): Promise<Taken | { refused: number }> {
    const key = `${budget.kind}:${value}`;
    const now = this.clock.now();
    if (this.redis) {
      try {
        const [granted, resetsAt] = (await this.redis.eval(TAKE_SCRIPT, 1, this.redisKey(key), now, budget.windowMs, budget.limit)) as [
          number,
          string,
        ];
        this.up();
        if (Number(granted) !== 1) return { refused: secondsUntil(Number(resetsAt), now) };
        return { budget, key, resetsAt: Number(resetsAt), shared: true };
      } catch (error) {
        this.fail(error);
      }
    }
    const window = budget.local.peek(key, now);
    if (window !== undefined && window.hits >= budget.limit) return { refused: secondsUntil(window.resetsAt, now) };
    return { budget, key, resetsAt: budget.local.hit(key, now).resetsAt, shared: false };
  }

  private async giveBack(token: Taken): Promise<void> {
    if (token.shared) {
      try {
        await this.redis!.eval(GIVE_BACK_SCRIPT, 1, this.redisKey(token.key), String(token.resetsAt));
      } catch (error) {
        this.fail(error); // the attempt stays counted until its window ends
      }
      return;
    }
    const window = token.budget.local.peek(token.key, this.clock.now());
    if (window !== undefined && window.resetsAt === token.resetsAt && window.hits > 0) window.hits -= 1;
  }

  /** Emails and addresses are not written to Redis as they are: their SHA-256 names the window. */
  private redisKey(key: string): string {
    return `${this.prefix}${createHash('sha256').update(key).digest('hex')}`;
  }

  private fail(error: unknown): void {
    if (this.down) return;
    this.down = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(`Sign-in budgets cannot be shared through Redis (${reason}): counting them on this instance until it answers again`);
  }

  private up(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.log('Redis answers again: sign-in budgets are shared across instances again');
  }
}
