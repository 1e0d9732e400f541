import { randomUUID } from 'node:crypto';
import * as fc from 'fast-check';
import Redis from 'ioredis';
import { RedisLeaseStore, sliceSize } from '../../src/rate-limit/lease-store';
import {
  accountWindows,
  limiterViolations,
  ManualClock,
  planArbitrary,
  runSimulation,
  SimulationPlan,
  tightPlanArbitrary,
} from '../support/limiter-simulation';
import { SharedLimiter, ThrottlerStorageRecord } from '../../src/rate-limit/shared-limiter';
import { eventually } from '../support/eventually';
import { describeWithBinaries, redisServerBinary } from '../support/servers/binaries';
import { RedisServer, startRedisServer } from '../support/servers/redis-server';

const WINDOW = 60_000;

// The connection options production uses (src/redis/redis.module.ts), with quick reconnects for the fault test.
const connect = (url: string) => new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true, retryStrategy: () => 20 });

const admittedCount = (records: ThrottlerStorageRecord[]) => records.filter((record) => !record.isBlocked).length;

describeWithBinaries('SharedLimiter on a real Redis', { 'redis-server': redisServerBinary() })('SharedLimiter on a real Redis', () => {
  let server: RedisServer;
  // One connection per instance, as each service instance has its own.
  let connections: Redis[];

  beforeAll(async () => {
    server = await startRedisServer();
    connections = Array.from({ length: 5 }, () => connect(server.url));
    await Promise.all(connections.map((connection) => connection.ping()));
  });

  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.quit().catch(() => undefined)));
    await server.close();
  });

  async function simulate(plan: SimulationPlan) {
    const clock = new ManualClock();
    const limiters = connections
      .slice(0, plan.instances)
      .map((connection) => new SharedLimiter({ store: new RedisLeaseStore(connection), windowMs: WINDOW, clock, leaseTimeoutMs: 5_000 }));
    const outcomes = await runSimulation(plan, limiters, clock, `${randomUUID()}:`);
    expect(limiters.some((limiter) => limiter.degraded)).toBe(false);
    return accountWindows(plan, outcomes, WINDOW);
  }

  it('computes the slice in Lua exactly as sliceSize does', async () => {
    const store = new RedisLeaseStore(connections[0]);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 5_000 }),
        async (remaining, used, hits, need, want) => {
          const key = randomUUID();
          const now = 1_700_000_000_000;
          await connections[0].hset(`flagstore:ratelimit:${key}`, 'e', String(now + 30_000), 'u', String(used));
          const lease = await store.lease({ key, limit: used + remaining, windowMs: WINDOW, now, need, want, hits });
          expect(lease).toEqual({
            granted: sliceSize(remaining, used, hits, need, want),
            resetsAt: now + 30_000,
            remaining: remaining - lease.granted,
          });
        },
      ),
      { seed: 3, numRuns: 200 },
    );
  });

  it('never admits more than the limit per window across instances, admits at least 99 % of it under demand, and says when to retry', async () => {
    await fc.assert(
      fc.asyncProperty(planArbitrary(fc, { maxSteps: 80 }), async (plan) => {
        expect(limiterViolations(await simulate(plan))).toEqual([]);
      }),
      { seed: 7, numRuns: 40 },
    );
  });

  it('admits at least 99 % of the limit when demand is just over it, spread over skewed instances', async () => {
    await fc.assert(
      fc.asyncProperty(tightPlanArbitrary(fc, { maxLimit: 1_000 }), async (plan) => {
        expect(limiterViolations(await simulate(plan))).toEqual([]);
      }),
      { seed: 13, numRuns: 25 },
    );
  });

  it('never admits more than small limits either', async () => {
    await fc.assert(
      fc.asyncProperty(planArbitrary(fc, { smallLimits: true, maxSteps: 60 }), async (plan) => {
        expect(limiterViolations(await simulate(plan), { minLimit: Infinity })).toEqual([]);
      }),
      { seed: 11, numRuns: 30 },
    );
  });

  describe('when its Redis stops', () => {
    let own: RedisServer;
    let a: Redis;
    let b: Redis;

    beforeAll(async () => {
      own = await startRedisServer();
      a = connect(own.url);
      b = connect(own.url);
      await Promise.all([a.ping(), b.ping()]);
    });

    afterAll(async () => {
      a.disconnect();
      b.disconnect();
      await own.close();
    });

    it('counts on each instance and keeps answering, then shares the limit again once Redis is back', async () => {
      const clock = new ManualClock();
      const logger = { warn: jest.fn(), log: jest.fn() };
      const options = { windowMs: WINDOW, clock, logger, leaseTimeoutMs: 200, probeIntervalMs: 1_000 };
      const first = new SharedLimiter({ store: new RedisLeaseStore(a), ...options });
      const second = new SharedLimiter({ store: new RedisLeaseStore(b), ...options });
      const poll = async (limiter: SharedLimiter, count: number) => Promise.all(Array.from({ length: count }, () => limiter.hit('key', 100)));

      // Shared: 150 polls over two instances admit the limit, 100.
      expect(admittedCount([...(await poll(first, 75)), ...(await poll(second, 75))])).toBe(100);

      await own.stop();
      clock.advance(WINDOW);
      const during = [...(await poll(first, 150)), ...(await poll(second, 150))];
      // Every poll answered, and each instance admits the full limit on its own.
      expect(admittedCount(during)).toBe(200);
      expect(during.filter((record) => record.isBlocked).every((record) => record.timeToBlockExpire >= 59)).toBe(true);
      expect(first.degraded && second.degraded).toBe(true);
      const warnings = logger.warn.mock.calls.length;
      expect(warnings).toBe(2); // once per instance and outage
      await poll(first, 50);
      expect(logger.warn).toHaveBeenCalledTimes(warnings);

      await own.start();
      await eventually(() => a.status === 'ready' && b.status === 'ready', { what: 'both connections back' });
      clock.advance(1_000);
      await poll(first, 1);
      await poll(second, 1);
      await eventually(() => !first.degraded && !second.degraded, { what: 'shared counting resumed' });
      expect(logger.log).toHaveBeenCalledTimes(2);

      clock.advance(WINDOW);
      expect(admittedCount([...(await poll(first, 90)), ...(await poll(second, 90))])).toBe(100);
    });
  });
});
