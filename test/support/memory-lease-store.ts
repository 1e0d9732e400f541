import { Lease, LeaseRequest, LeaseStore, RedisUnavailableError, sliceSize } from '../../src/rate-limit/lease-store';

interface MemoryWindow {
  ends: number;
  used: number;
}

/**
 * LEASE_SCRIPT in memory, for the limiter's tests. `failing` makes every lease fail,
 * as a Redis that does not answer; `leases` counts the round trips a Redis would have served.
 */
export class MemoryLeaseStore implements LeaseStore {
  private readonly windows = new Map<string, MemoryWindow>();
  failing = false;
  leases = 0;

  async lease(request: LeaseRequest): Promise<Lease> {
    if (this.failing) throw new RedisUnavailableError('the fake Redis is down');
    this.leases += 1;
    const { key, now, windowMs, limit } = request;
    let window = this.windows.get(key);
    if (!window || window.ends <= now) {
      window = { ends: now + windowMs, used: 0 };
      this.windows.set(key, window);
    }
    const remaining = Math.max(0, limit - window.used);
    const granted = sliceSize(remaining, window.used, request.hits, request.need, Math.max(0, Math.floor(request.want)));
    window.used += granted;
    return { granted, resetsAt: window.ends, remaining: remaining - granted };
  }

  /** What the store has handed out in the key's current window. */
  used(key: string): number {
    return this.windows.get(key)?.used ?? 0;
  }
}
