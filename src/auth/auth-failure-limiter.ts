import { Inject, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { clientAddressResolver } from './client-address';

/** The fixed window failed authentications are counted in. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Counts requests with a missing or invalid API key per client address, and stops an address that sends
 * more than AUTH_FAILURES_PER_MINUTE of them in a window before any further request of its reaches the
 * database (a key already cached as valid still passes: it costs no lookup). Per instance and in memory:
 * behind a balancer of N instances an address gets at most N times the budget, and the point is to keep
 * floods off the database, which this does on every instance.
 *
 * The map is bounded: past MAX_ADDRESSES, windows that have ended are dropped first, then the oldest ones.
 */
@Injectable()
export class AuthFailureLimiter {
  static readonly MAX_ADDRESSES = 100_000;
  readonly limit: number;
  /** The address a request's failures are counted under (TRUST_PROXY decides whose X-Forwarded-For counts). */
  readonly addressOf: (request: IncomingMessage) => string;
  private readonly windows = new Map<string, Window>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.limit = config.authFailuresPerMinute;
    this.addressOf = clientAddressResolver(config.trustProxy);
  }

  /** Seconds until `address` may try again, or 0 when it may go on. */
  retryAfterSeconds(address: string, now = Date.now()): number {
    const window = this.windows.get(address);
    if (window === undefined || window.failures < this.limit) return 0;
    const left = window.startedAt + AUTH_FAILURE_WINDOW_MS - now;
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /** Counts one request from `address` that had no valid key. */
  record(address: string, now = Date.now()): void {
    const window = this.windows.get(address);
    if (window !== undefined && now - window.startedAt < AUTH_FAILURE_WINDOW_MS) {
      window.failures += 1;
      return;
    }
    if (window === undefined && this.windows.size >= AuthFailureLimiter.MAX_ADDRESSES) this.makeRoom(now);
    // Re-inserted, so the map stays ordered by window start and the oldest is first.
    this.windows.delete(address);
    this.windows.set(address, { startedAt: now, failures: 1 });
  }

  /** Takes back a request counted up front that turned out to carry a valid key. */
  forgive(address: string, now = Date.now()): void {
    const window = this.windows.get(address);
    if (window !== undefined && window.failures > 0 && now - window.startedAt < AUTH_FAILURE_WINDOW_MS) window.failures -= 1;
  }

  private makeRoom(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.startedAt < AUTH_FAILURE_WINDOW_MS) break;
      this.windows.delete(address);
    }
    if (this.windows.size >= AuthFailureLimiter.MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value as string);
  }
}
