import * as fc from 'fast-check';
import { MemoryLeaseStore } from '../../test/support/memory-lease-store';
import { Lease, LeaseRequest, LeaseStore, sliceSize } from './lease-store';
import {
  accountWindows,
  limiterViolations,
  ManualClock,
  planArbitrary,
  runSimulation,
  tightPlanArbitrary,
} from '../../test/support/limiter-simulation';
import { SharedLimiter, ThrottlerStorageRecord } from './shared-limiter';

const WINDOW = 60_000;

function limiters(count: number, store: LeaseStore, clock: ManualClock, extra: Partial<ConstructorParameters<typeof SharedLimiter>[0]> = {}) {
  return Array.from({ length: count }, () => new SharedLimiter({ store, windowMs: WINDOW, clock, ...extra }));
}

async function hits(limiter: SharedLimiter, key: string, limit: number, count: number): Promise<ThrottlerStorageRecord[]> {
  return Promise.all(Array.from({ length: count }, () => limiter.hit(key, limit)));
}

const admittedCount = (records: ThrottlerStorageRecord[]) => records.filter((record) => !record.isBlocked).length;

describe('sliceSize', () => {
  it('takes a quarter of what remains times the instance share, within want, need, 1 and what remains', () => {
    expect(sliceSize(1000, 0, 1, 0, Infinity)).toBe(250);
    expect(sliceSize(1000, 300, 100, 0, Infinity)).toBe(83); // a third of the traffic
    expect(sliceSize(1000, 300, 100, 0, 40)).toBe(40);
    expect(sliceSize(1000, 300, 100, 120, 40)).toBe(120); // what waits is granted whole
    expect(sliceSize(3, 900, 300, 0, Infinity)).toBe(1);
    expect(sliceSize(3, 900, 300, 10, Infinity)).toBe(3);
    expect(sliceSize(0, 1000, 300, 5, Infinity)).toBe(0);
  });

  it('shrinks as the budget runs out', () => {
    const sizes = [1200, 600, 100, 20, 4].map((remaining) => sliceSize(remaining, 1000, 333, 0, Infinity));
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(sizes.at(-1)).toBe(1);
  });
});

describe('SharedLimiter', () => {
  it('counts in memory, synchronously, without a store', () => {
    const clock = new ManualClock();
    const [limiter] = limiters(1, undefined as unknown as LeaseStore, clock);
    const records = Array.from({ length: 4 }, () => limiter.hit('k', 3) as ThrottlerStorageRecord);
    expect(records.map((record) => record.isBlocked)).toEqual([false, false, false, true]);
    clock.advance(20_500);
    expect(limiter.hit('k', 3)).toMatchObject({ isBlocked: true, timeToBlockExpire: 40 });
    clock.advance(39_500);
    expect(limiter.hit('k', 3)).toMatchObject({ isBlocked: false });
  });

  it('admits from its slice synchronously and leases far less often than it admits', async () => {
    const clock = new ManualClock();
    const store = new MemoryLeaseStore();
    const [limiter] = limiters(1, store, clock);
    let synchronous = 0;
    for (let i = 0; i < 1000; i++) {
      const counted = limiter.hit('k', 10_000);
      if (!(counted instanceof Promise)) synchronous += 1;
      expect((await counted).isBlocked).toBe(false);
      clock.advance(20);
    }
    expect(synchronous).toBeGreaterThan(980);
    expect(store.leases).toBeLessThan(20);
  });

  it('makes the hits that find the slice empty wait for one lease, not one each', async () => {
    const clock = new ManualClock();
    const store = new MemoryLeaseStore();
    const [limiter] = limiters(1, store, clock);
    const records = await hits(limiter, 'k', 1000, 300);
    expect(admittedCount(records)).toBe(300);
    expect(store.leases).toBeLessThanOrEqual(2);
  });

  it('rejects synchronously once the window is used up, with the seconds left in it, until it ends', async () => {
    const clock = new ManualClock();
    const store = new MemoryLeaseStore();
    const [a, b] = limiters(2, store, clock);
    await hits(a, 'k', 100, 60);
    clock.advance(15_200);
    await hits(b, 'k', 100, 60);
    clock.advance(10_000);
    // Each instance learns that the window is used up from one lease that grants nothing...
    for (const limiter of [a, b]) expect(await limiter.hit('k', 100)).toMatchObject({ isBlocked: true, timeToBlockExpire: 35 });
    const leases = store.leases;
    // ...and then answers alone.
    const rejected = [a.hit('k', 100), b.hit('k', 100)];
    for (const record of rejected) {
      expect(record).not.toBeInstanceOf(Promise);
      expect(record).toMatchObject({ isBlocked: true, timeToBlockExpire: 35 }); // 60 - 25.2 s, rounded up
    }
    expect(store.leases).toBe(leases);
    clock.advance(34_800);
    expect((await a.hit('k', 100)).isBlocked).toBe(false);
  });

  it('never admits more than the limit across instances in a window, and keeps the rest of the budget usable', async () => {
    const clock = new ManualClock();
    const store = new MemoryLeaseStore();
    const instances = limiters(3, store, clock);
    let admitted = 0;
    for (let round = 0; round < 600; round++) {
      for (const limiter of instances) admitted += admittedCount(await hits(limiter, 'k', 1200, 1));
      clock.advance(50);
    }
    expect(admitted).toBe(1200);
    // At the limit, with three instances polling evenly: more than ten polls per round trip.
    expect(1200 / store.leases).toBeGreaterThan(10);
  });

  describe('when the store fails', () => {
    class FlakyStore extends MemoryLeaseStore {
      hang = false;
      override lease(request: LeaseRequest): Promise<Lease> {
        return this.hang ? new Promise(() => undefined) : super.lease(request);
      }
    }

    it('counts on this instance with the full limit, warns once, and shares again once the store answers', async () => {
      const clock = new ManualClock();
      const store = new FlakyStore();
      const logger = { warn: jest.fn(), log: jest.fn() };
      const [a, b] = limiters(2, store, clock, { logger, probeIntervalMs: 1_000 });
      expect(admittedCount(await hits(a, 'k', 50, 30))).toBe(30);

      store.failing = true;
      // Each instance now has the whole limit to itself (a's slice of the shared window aside).
      const during = [...(await hits(a, 'k', 50, 80)), ...(await hits(b, 'k', 50, 80))];
      expect(admittedCount(during)).toBeGreaterThanOrEqual(100);
      expect(during.filter((record) => record.isBlocked).every((record) => record.timeToBlockExpire === 60)).toBe(true);
      expect(a.degraded && b.degraded).toBe(true);
      expect(logger.warn).toHaveBeenCalledTimes(2); // once per instance
      expect(a.outages).toBe(1);

      store.failing = false;
      clock.advance(1_000);
      await hits(a, 'k', 50, 1); // this one is still counted here; it lets a try the store again
      await new Promise((resolve) => setImmediate(resolve));
      expect(a.degraded).toBe(false);
      expect(logger.log).toHaveBeenCalledTimes(1);
      clock.advance(60_000);
      const shared = [...(await hits(a, 'k', 50, 40)), ...(await hits(a, 'k', 50, 40))];
      expect(admittedCount(shared)).toBe(50);
    });

    it('does not keep a poll waiting longer than the lease timeout', async () => {
      const clock = new ManualClock();
      const store = new FlakyStore();
      store.hang = true;
      const [limiter] = limiters(1, store, clock, { leaseTimeoutMs: 20 });
      const started = Date.now();
      expect((await limiter.hit('k', 5)).isBlocked).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(limiter.degraded).toBe(true);
      // Counted here from now on, synchronously.
      const records = Array.from({ length: 5 }, () => limiter.hit('k', 5));
      expect(records.some((record) => record instanceof Promise)).toBe(false);
      expect((records as ThrottlerStorageRecord[]).map((record) => record.isBlocked)).toEqual([false, false, false, false, true]);
    });
  });
});

describe('SharedLimiter properties, on the in-memory lease script', () => {
  it('never admits more than the limit per window, admits at least 99 % of it under demand, and says when to retry', async () => {
    await fc.assert(
      fc.asyncProperty(planArbitrary(fc), async (plan) => {
        const clock = new ManualClock();
        const store = new MemoryLeaseStore();
        const outcomes = await runSimulation(plan, limiters(plan.instances, store, clock), clock, 'k');
        expect(limiterViolations(accountWindows(plan, outcomes, WINDOW))).toEqual([]);
      }),
      { seed: 7, numRuns: 150 },
    );
  });

  it('admits at least 99 % of the limit when demand is just over it, spread over skewed instances', async () => {
    await fc.assert(
      fc.asyncProperty(tightPlanArbitrary(fc), async (plan) => {
        const clock = new ManualClock();
        const store = new MemoryLeaseStore();
        const outcomes = await runSimulation(plan, limiters(plan.instances, store, clock), clock, 'k');
        expect(limiterViolations(accountWindows(plan, outcomes, WINDOW))).toEqual([]);
      }),
      { seed: 13, numRuns: 100 },
    );
  });

  it('never admits more than small limits either', async () => {
    await fc.assert(
      fc.asyncProperty(planArbitrary(fc, { smallLimits: true }), async (plan) => {
        const clock = new ManualClock();
        const store = new MemoryLeaseStore();
        const outcomes = await runSimulation(plan, limiters(plan.instances, store, clock), clock, 'k');
        const accounts = accountWindows(plan, outcomes, WINDOW);
        expect(limiterViolations(accounts, { minLimit: Infinity })).toEqual([]);
        // Below 100 the loss of slices is a few hits; the limit is still never passed and mostly reached.
        for (const w of accounts) if (w.demand > 2 * w.limit) expect(w.admitted).toBeGreaterThanOrEqual(Math.floor(0.9 * w.limit));
      }),
      { seed: 11, numRuns: 150 },
    );
  });
});
