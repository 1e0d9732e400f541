import { createHash } from 'node:crypto';
import type Redis from 'ioredis';

/** What one instance asks of a key's shared window. Times are milliseconds of the caller's clock. */
export interface LeaseRequest {
  key: string;
  limit: number;
  windowMs: number;
  now: number;
  /** Hits waiting on this lease: granted in full if the window has that much left, whatever the slice rule says. */
  need: number;
  /** The most this instance wants beyond `need` (see SharedLimiter.want). */
  want: number;
  /** Hits this instance has counted in the window: over the window's use so far, its share of the key's traffic. */
  hits: number;
}

export interface Lease {
  /** Hits this instance may admit until `resetsAt`; 0 means the window is used up. */
  granted: number;
  /** When the shared window ends (the same clock as `now`). */
  resetsAt: number;
  /** What the window has left after this grant. */
  remaining: number;
}

/** Atomically takes a slice of a key's per-window budget. Redis in production; an in-memory fake in tests (test/support/memory-lease-store.ts). */
export interface LeaseStore {
  lease(request: LeaseRequest): Promise<Lease>;
}

/**
 * The fraction of what remains that the instances take between them: an instance's slice is this fraction of
 * what remains times its share of the key's traffic (1/n with n evenly balanced instances). A slice then lasts
 * while the deployment uses a quarter of what remained, so slices shrink geometrically as the budget runs out,
 * and when it is gone the slices still held are a few hits (what the property tests measure).
 */
export const SLICE_FRACTION = 0.25;

/**
 * The slice rule, shared by the tests' in-memory store and (in Lua) LEASE_SCRIPT: SLICE_FRACTION of what remains times
 * the instance's share of the window's use so far (hits over used), at most `want`, at least what is waiting
 * and at least 1, never more than remains.
 */
export function sliceSize(remaining: number, used: number, hits: number, need: number, want: number, fraction = SLICE_FRACTION): number {
  const share = used > 0 && hits < used ? hits / used : 1;
  let slice = Math.floor(remaining * fraction * share);
  if (slice > want) slice = want;
  if (slice < need) slice = need;
  if (slice < 1) slice = 1;
  return Math.min(slice, Math.max(0, remaining));
}

/**
 * KEYS[1]: the window, a hash {e: its end, u: hits granted in it}.
 * ARGV: now, windowMs, limit, need, want, hits, fraction.
 * A window starts with the first lease at or after the previous one's end and lasts windowMs: fixed windows
 * anchored at first use, like the in-memory limiter's. The caller's clock is used, so that tests control it;
 * between instances it differs by what NTP leaves (milliseconds), which moves a boundary by that much.
 * Returns {granted, resetsAt, remaining}.
 */
export const LEASE_SCRIPT = `
local now = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
local hits = tonumber(ARGV[6])
local fraction = tonumber(ARGV[7])
local w = redis.call('HMGET', KEYS[1], 'e', 'u')
local ends = tonumber(w[1])
local used = tonumber(w[2]) or 0
if (not ends) or ends <= now then
  ends = now + windowMs
  used = 0
  redis.call('HSET', KEYS[1], 'e', string.format('%d', ends), 'u', 0)
  redis.call('PEXPIRE', KEYS[1], windowMs)
end
local remaining = limit - used
if remaining < 0 then remaining = 0 end
local share = 1
if used > 0 and hits < used then share = hits / used end
local slice = math.floor(remaining * fraction * share)
if slice > want then slice = want end
if slice < need then slice = need end
if slice < 1 then slice = 1 end
if slice > remaining then slice = remaining end
if slice > 0 then redis.call('HINCRBY', KEYS[1], 'u', slice) end
return { slice, string.format('%d', ends), remaining - slice }`;

const LEASE_SHA = createHash('sha1').update(LEASE_SCRIPT).digest('hex');

/** ioredis states in which a command would only wait in the offline queue: fail at once instead. */
const UNAVAILABLE = new Set(['reconnecting', 'close', 'end']);

export class RedisUnavailableError extends Error {}

/** Leases from Redis: one EVALSHA per slice (EVAL once after a restart emptied the script cache). */
export class RedisLeaseStore implements LeaseStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'flagstore:ratelimit:',
  ) {}

  async lease(request: LeaseRequest): Promise<Lease> {
    if (UNAVAILABLE.has(this.redis.status)) throw new RedisUnavailableError(`Redis connection is ${this.redis.status}`);
    const args = [
      1,
      `${this.prefix}${request.key}`,
      request.now,
      request.windowMs,
      request.limit,
      request.need,
      Number.isFinite(request.want) ? Math.max(0, Math.floor(request.want)) : request.limit,
      request.hits,
      SLICE_FRACTION,
    ] as const;
    let reply: unknown;
    try {
      reply = await this.redis.evalsha(LEASE_SHA, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await this.redis.eval(LEASE_SCRIPT, ...args);
    }
    const [granted, resetsAt, remaining] = reply as [number, string, number];
    return { granted: Number(granted), resetsAt: Number(resetsAt), remaining: Number(remaining) };
  }
}
