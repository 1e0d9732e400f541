import { Inject, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { FixedWindowCounter, secondsUntil } from '../rate-limit/fixed-window';
import { clientAddressResolver } from './client-address';

/** The fixed window failed authentications are counted in. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;

/**
 * Counts requests with a missing or invalid API key or admin token per client address (one budget for both), and
 * answers 429 to an address that sent more than AUTH_FAILURES_PER_MINUTE of them in a window. Only requests whose
 * credential turned out bad are counted or refused: a valid key or admin token passes whatever its address did (game
 * servers of a studio share a NAT address).
 * Bad credentials cost the database nothing of their own anyway (ApiKeyAuthenticator). Per instance and in memory (the
 * rate limiter's fixed-window counter, under a bucket of its own): behind a balancer of N instances an
 * address gets at most N times the budget, and the point is to keep floods off the database, which this does
 * on every instance.
 *
 * The counter is bounded: past MAX_ADDRESSES, windows that have ended are dropped first, then the oldest ones.
 */
@Injectable()
export class AuthFailureLimiter {
  static readonly MAX_ADDRESSES = 100_000;
  readonly limit: number;
  /** The address a request's failures are counted under (TRUST_PROXY decides whose X-Forwarded-For counts). */
  readonly addressOf: (request: IncomingMessage) => string;
  private readonly failures = new FixedWindowCounter(AUTH_FAILURE_WINDOW_MS, AuthFailureLimiter.MAX_ADDRESSES);

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.limit = config.authFailuresPerMinute;
    this.addressOf = clientAddressResolver(config.trustProxy);
  }

  /** Seconds until `address` may try again, or 0 when it may go on. */
  retryAfterSeconds(address: string): number {
    const now = this.clock.now();
    const window = this.failures.peek(address, now);
    if (window === undefined || window.hits < this.limit) return 0;
    return secondsUntil(window.resetsAt, now);
  }

  /** Counts one request from `address` that had no valid key. */
  record(address: string): void {
    this.failures.hit(address, this.clock.now());
  }
}
