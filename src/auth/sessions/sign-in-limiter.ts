import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { FixedWindowCounter, secondsUntil } from '../../rate-limit/fixed-window';
import { RateLimitedError } from '../../rate-limit/rate-limited.error';
import { clientAddressResolver } from '../client-address';

/** Failed sign-ins one email may have in EMAIL_WINDOW_MS. */
export const EMAIL_FAILURES = 10;
export const EMAIL_WINDOW_MS = 15 * 60_000;
const ADDRESS_WINDOW_MS = 60_000;
const MAX_TRACKED = 100_000;

/**
 * Failed sign-ins, counted per email (EMAIL_FAILURES per 15 minutes: one account cannot be guessed at from many
 * addresses) and per client address (SIGN_IN_FAILURES_PER_MINUTE: one address cannot try many accounts), apart from
 * the API keys' and the admin token's budget. Checked before the password hash is computed, so a refused attempt
 * costs no hashing. Per instance and in memory, like AuthFailureLimiter: behind N instances a budget is at most N
 * times as large, and no flood reaches the hashing.
 */
@Injectable()
export class SignInLimiter {
  private readonly byEmail = new FixedWindowCounter(EMAIL_WINDOW_MS, MAX_TRACKED);
  private readonly byAddress = new FixedWindowCounter(ADDRESS_WINDOW_MS, MAX_TRACKED);
  private readonly addressLimit: number;
  private readonly addressOf: (request: IncomingMessage) => string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.addressLimit = config.signInFailuresPerMinute;
    this.addressOf = clientAddressResolver(config.trustProxy);
  }

  /** 429 when the email or the address has spent its budget of failures. */
  check(request: IncomingMessage, email: string): void {
    const now = this.clock.now();
    const byAddress = this.byAddress.peek(this.addressOf(request), now);
    if (byAddress !== undefined && byAddress.hits >= this.addressLimit) {
      const wait = secondsUntil(byAddress.resetsAt, now);
      throw new RateLimitedError(`More than ${this.addressLimit} failed sign-ins a minute from this address; retry after ${wait} s`, wait);
    }
    const byEmail = this.byEmail.peek(normalisedEmail(email), now);
    if (byEmail !== undefined && byEmail.hits >= EMAIL_FAILURES) {
      const wait = secondsUntil(byEmail.resetsAt, now);
      throw new RateLimitedError(`More than ${EMAIL_FAILURES} failed sign-ins for this email in 15 minutes; retry after ${wait} s`, wait);
    }
  }

  /** Counts a failed sign-in against both budgets. */
  recordFailure(request: IncomingMessage, email: string): void {
    const now = this.clock.now();
    this.byAddress.hit(this.addressOf(request), now);
    this.byEmail.hit(normalisedEmail(email), now);
  }
}

function normalisedEmail(email: string): string {
  return email.trim().toLowerCase();
}
