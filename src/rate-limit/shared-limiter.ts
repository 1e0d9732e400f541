import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Clock } from '../common/clock';
import { FixedWindowCounter, secondsUntil } from './fixed-window';
import { Lease, LeaseStore } from './lease-store';

export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export interface LimiterLogger {
  warn(message: string): void;
  log(message: string): void;
}

export interface SharedLimiterOptions {
  /** Where the shared windows live (Redis); without one every window is this instance's own. */
  store?: LeaseStore;
  windowMs: number;
  /** What time it is: the app's CLOCK (RateLimitStore passes it), or a test's. */
  clock: Pick<Clock, 'now'>;
  logger?: LimiterLogger;
  /** A lease not answered within this is a Redis outage: the poll waiting on it is counted here instead. */
  leaseTimeoutMs?: number;
  /** During an outage, at most one lease is tried per this interval (of the injected clock) to see if it is over. */
  probeIntervalMs?: number;
}

interface Waiter {
  resolve(record: ThrottlerStorageRecord): void;
}

/** One key's slice of its shared window on this instance. */
interface KeyState {
  key: string;
  limit: number;
  /** End of the shared window the tokens belong to; 0 when no window is known. */
  resetsAt: number;
  tokens: number;
  /** The store granted nothing in the window ending at resetsAt: reject until then, without asking again. */
  exhausted: boolean;
  lastGrant: number;
  /** Polls on this instance since `since`, for the rate that caps what it asks for. */
  hits: number;
  since: number;
  leasing: boolean;
  waiters: Waiter[];
}

/** Below this slice size nothing is fetched ahead: near the end of a budget every token taken may be lost. */
const PREFETCH_MIN_GRANT = 8;

/**
 * A fixed-window rate limit per key, shared by every instance without a round trip per hit.
 *
 * Each instance leases slices of a key's window from the store (one atomic script: see LEASE_SCRIPT and
 * sliceSize) and admits hits from its slice synchronously. When the slice is empty, the hits that arrive wait
 * for one lease per key (never one per hit); when the store grants nothing the window is used up, and this
 * instance rejects the key synchronously until the window's end, which the store told it. Once a slice is down
 * to a quarter, the next one is fetched ahead so that hits do not wait.
 *
 * What a slice holds when the window ends is lost (it was counted in the store): that, and only that, keeps
 * the total admitted under the limit across instances. Slices are small when little remains and an instance
 * never asks for more than its own rate will use before the window ends, so the loss stays small.
 *
 * When the store fails or does not answer, this instance counts every key itself (the full limit per
 * instance, as without a store), says so once per outage, and keeps answering; it tries a lease again at most
 * once per probe interval and goes back to shared counting once one succeeds.
 */
export class SharedLimiter {
  /** Hits counted on this instance because the store was unavailable, for metrics. */
  fallbackHits = 0;
  outages = 0;

  private readonly store?: LeaseStore;
  private readonly windowMs: number;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly logger?: LimiterLogger;
  private readonly leaseTimeoutMs: number;
  private readonly probeIntervalMs: number;
  private readonly keys = new Map<string, KeyState>();
  private readonly local: FixedWindowCounter;
  private down = false;
  private probing = false;
  private nextProbeAt = 0;

  constructor(options: SharedLimiterOptions) {
    this.store = options.store;
    this.windowMs = options.windowMs;
    this.clock = options.clock;
    this.logger = options.logger;
    this.leaseTimeoutMs = options.leaseTimeoutMs ?? 500;
    this.probeIntervalMs = options.probeIntervalMs ?? 1_000;
    this.local = new FixedWindowCounter(this.windowMs);
  }

  get shared(): boolean {
    return this.store !== undefined;
  }

  /** Whether hits are being counted on this instance alone because the store is unavailable. */
  get degraded(): boolean {
    return this.down;
  }

  /** Counts one hit; synchronous unless this instance's slice is empty and a lease must be awaited. */
  hit(key: string, limit: number): ThrottlerStorageRecord | Promise<ThrottlerStorageRecord> {
    const now = this.clock.now();
    if (this.store === undefined) return this.countLocally(key, limit, now);
    if (this.down) {
      this.probe(key, limit, now);
      return this.countLocally(key, limit, now);
    }
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { key, limit, resetsAt: 0, tokens: 0, exhausted: false, lastGrant: 0, hits: 0, since: now, leasing: false, waiters: [] };
      this.keys.set(key, state);
    }
    state.limit = limit;
    if (state.resetsAt !== 0 && state.resetsAt <= now) this.forgetWindow(state, now);
    state.hits += 1;
    if (state.tokens > 0) {
      state.tokens -= 1;
      if (!state.leasing && state.lastGrant >= PREFETCH_MIN_GRANT && state.tokens * 4 <= state.lastGrant) this.lease(state);
      return admitted(state.hits, state.resetsAt, now);
    }
    if (state.exhausted) return rejected(limit, state.resetsAt, now);
    return new Promise((resolve) => {
      state.waiters.push({ resolve });
      if (!state.leasing) this.lease(state);
    });
  }

  /** Drops expired state; the owner calls it now and then. */
  sweep(): void {
    const now = this.clock.now();
    for (const [key, state] of this.keys) {
      if (!state.leasing && state.waiters.length === 0 && state.resetsAt <= now && now - state.since >= this.windowMs) this.keys.delete(key);
    }
    this.local.sweep(now);
  }

  /** In-memory fixed window: the limiter without a store, and every key while the store is unavailable. */
  private countLocally(key: string, limit: number, now: number): ThrottlerStorageRecord {
    const window = this.local.hit(key, now);
    if (this.store !== undefined) this.fallbackHits += 1;
    return window.hits > limit ? rejected(limit, window.resetsAt, now) : admitted(window.hits, window.resetsAt, now);
  }

  private forgetWindow(state: KeyState, now: number): void {
    state.resetsAt = 0;
    state.tokens = 0;
    state.exhausted = false;
    state.lastGrant = 0;
    state.hits = 0;
    state.since = now;
  }

  /**
   * The most this instance asks for beyond the hits waiting: what it expects to use before the window ends at
   * its rate so far, and no more than it has seen in the window (so slices start at 1 and double, and an
   * instance that sees little of a key's traffic never sits on much of its budget).
   */
  private want(state: KeyState, now: number): number {
    const elapsed = Math.max(1_000, now - state.since);
    const left = state.resetsAt > now ? state.resetsAt - now : this.windowMs;
    const atRate = Math.ceil((state.hits * left) / elapsed);
    return Math.max(0, Math.min(atRate, state.hits) - state.tokens);
  }

  private lease(state: KeyState): void {
    const now = this.clock.now();
    state.leasing = true;
    const request = {
      key: state.key,
      limit: state.limit,
      windowMs: this.windowMs,
      now,
      need: state.waiters.length,
      want: this.want(state, now),
      hits: state.hits,
    };
    this.withTimeout(this.store!.lease(request)).then(
      (lease) => this.granted(state, lease),
      (error: unknown) => this.failed(state, error),
    );
  }

  private granted(state: KeyState, lease: Lease): void {
    state.leasing = false;
    this.up();
    const now = this.clock.now();
    if (lease.resetsAt <= now) {
      // The window ended while the lease was on its way; its grant is lost.
      if (state.resetsAt !== 0 && state.resetsAt <= now) this.forgetWindow(state, now);
    } else {
      if (lease.resetsAt !== state.resetsAt) {
        // A new window (or the store lost the old one): tokens of another window are void.
        if (state.resetsAt !== 0) this.forgetWindow(state, now);
        state.resetsAt = lease.resetsAt;
      }
      state.tokens += lease.granted;
      state.lastGrant = lease.granted;
      if (lease.granted === 0) state.exhausted = true;
    }
    this.serve(state, now);
  }

  private serve(state: KeyState, now: number): void {
    let served = 0;
    while (served < state.waiters.length && state.tokens > 0) {
      state.tokens -= 1;
      state.waiters[served++].resolve(admitted(state.hits, state.resetsAt, now));
    }
    if (state.exhausted) {
      while (served < state.waiters.length) state.waiters[served++].resolve(rejected(state.limit, state.resetsAt, now));
    }
    state.waiters.splice(0, served);
    if (state.waiters.length > 0 && !state.leasing) this.lease(state);
  }

  private failed(state: KeyState, error: unknown): void {
    state.leasing = false;
    this.fail(error);
    const now = this.clock.now();
    const waiters = state.waiters.splice(0);
    for (const waiter of waiters) waiter.resolve(this.countLocally(state.key, state.limit, now));
  }

  /** During an outage, one lease now and then; its success ends the outage. */
  private probe(key: string, limit: number, now: number): void {
    if (this.probing || now < this.nextProbeAt) return;
    this.probing = true;
    const state = this.keys.get(key);
    this.withTimeout(this.store!.lease({ key, limit, windowMs: this.windowMs, now, need: 0, want: 1, hits: 1 })).then(
      (lease) => {
        this.probing = false;
        this.up();
        // The probe's token was taken from the shared window; keep it only if this key's state can use it.
        if (state && !state.leasing) this.granted(state, lease);
      },
      () => {
        this.probing = false;
        this.nextProbeAt = this.clock.now() + this.probeIntervalMs;
      },
    );
  }

  private fail(error: unknown): void {
    this.nextProbeAt = this.clock.now() + this.probeIntervalMs;
    if (this.down) return;
    this.down = true;
    this.outages += 1;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger?.warn(`Rate limit store unavailable (${reason}): counting limits on this instance until it answers again`);
  }

  private up(): void {
    if (!this.down) return;
    this.down = false;
    this.logger?.log('Rate limit store answers again: limits are shared across instances again');
  }

  private withTimeout<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${this.leaseTimeoutMs} ms`)), this.leaseTimeoutMs);
      timer.unref?.();
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

function admitted(hits: number, resetsAt: number, now: number): ThrottlerStorageRecord {
  return { totalHits: hits, timeToExpire: secondsUntil(resetsAt, now), isBlocked: false, timeToBlockExpire: 0 };
}

function rejected(limit: number, resetsAt: number, now: number): ThrottlerStorageRecord {
  const seconds = secondsUntil(resetsAt, now);
  return { totalHits: limit + 1, timeToExpire: seconds, isBlocked: true, timeToBlockExpire: seconds };
}
