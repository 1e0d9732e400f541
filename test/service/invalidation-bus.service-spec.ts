import { Client } from 'pg';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { RedisConnections } from '../../src/redis/redis.module';
import { AppConfig } from '../../src/config/app-config';
import { eventually } from '../support/eventually';
import { describeWithBinaries, postgresBinDir, redisServerBinary } from '../support/servers/binaries';
import { PostgresServer, startPostgresServer } from '../support/servers/postgres-server';
import { RedisServer, startRedisServer } from '../support/servers/redis-server';

/** One instance's bus, with everything it heard. */
interface Instance {
  bus: InvalidationBus;
  heard: string[];
  resets: number;
  close(): Promise<void>;
}

async function startInstance(databaseUrl: string, redisUrl?: string, redisPrefix?: string): Promise<Instance> {
  const redis = new RedisConnections({ redisUrl } as AppConfig);
  const bus = new InvalidationBus(redis, databaseUrl, { redisPrefix } as AppConfig);
  const instance: Instance = {
    bus,
    heard: [],
    resets: 0,
    close: async () => {
      await bus.beforeApplicationShutdown();
      await bus.onApplicationShutdown();
      await redis.onApplicationShutdown();
    },
  };
  bus.subscribe('flags', (id) => instance.heard.push(id));
  bus.onReset(() => (instance.resets += 1));
  await bus.onModuleInit();
  return instance;
}

/** Heard the announcement itself, or was told to drop everything (which covers it). */
const caughtUp = (instance: Instance, id: string) => instance.heard.includes(id) || instance.resets > 0;

describeWithBinaries('invalidation bus on Redis, through faults', { 'redis-server': redisServerBinary() })(
  'invalidation bus on Redis, through faults',
  () => {
    let redis: RedisServer;
    const instances: Instance[] = [];
    const start = async (prefix?: string) => {
      const instance = await startInstance('postgres://unused', redis.url, typeof prefix === 'string' ? prefix : undefined);
      instances.push(instance);
      return instance;
    };

    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterEach(async () => {
      await Promise.all(instances.splice(0).map((instance) => instance.close()));
    });
    afterAll(() => redis.close());

    it('every instance of ten started together hears the first announcement', async () => {
      const all = await Promise.all(Array.from({ length: 10 }, start));
      all[0].bus.publish('flags', 'org-first');
      expect(all[0].heard).toEqual(['org-first']); // at once, in the publishing process
      await eventually(() => all.every((instance) => instance.heard.includes('org-first')), {
        timeoutMs: 1_000,
        what: 'all ten instances hearing the announcement',
      });
      expect(all.map((instance) => instance.resets)).toEqual(Array(10).fill(0));
    });

    it('keeps deployments that share one Redis apart by REDIS_PREFIX', async () => {
      const [staging, stagingToo, production, unnamed] = await Promise.all([start('staging'), start('staging'), start('production'), start()]);
      staging.bus.publish('flags', 'org-staging');
      production.bus.publish('flags', 'org-production');
      unnamed.bus.publish('flags', 'org-unnamed');
      await eventually(() => stagingToo.heard.includes('org-staging'), { timeoutMs: 1_000, what: 'the other staging instance hearing staging' });
      // Every message has gone out by now; a later one of each deployment shows that nothing else arrived.
      for (const instance of [staging, production, unnamed]) instance.bus.publish('flags', 'marker');
      await eventually(() => [staging, stagingToo, production, unnamed].every((instance) => instance.heard.includes('marker')), {
        timeoutMs: 1_000,
        what: 'the markers',
      });
      expect(stagingToo.heard.filter((id) => id !== 'marker')).toEqual(['org-staging']);
      expect(production.heard.filter((id) => id !== 'marker')).toEqual(['org-production']);
      expect(unnamed.heard.filter((id) => id !== 'marker')).toEqual(['org-unnamed']);
    });

    it('an announcement made while Redis is down is delivered once it is back, and messages flow again', async () => {
      const [a, b] = [await start(), await start()];
      await redis.stop();
      a.bus.publish('flags', 'org-during-outage');
      expect(a.heard).toEqual(['org-during-outage']);
      await eventually(() => a.bus.pending === 1, { what: 'the announcement waiting in the outbox' });

      await redis.start();
      await eventually(() => a.bus.pending === 0 && caughtUp(b, 'org-during-outage'), {
        timeoutMs: 10_000,
        what: 'the waiting announcement reaching the other instance',
      });
      // The other instance resubscribed, so it also dropped its caches: it may have missed anything.
      expect(b.resets).toBe(1);

      a.bus.publish('flags', 'org-after');
      await eventually(() => b.heard.includes('org-after'), { timeoutMs: 2_000, what: 'a new announcement after the restart' });
    });

    it('shuts down within its bound while Redis is down', async () => {
      const a = await start();
      await redis.stop();
      a.bus.publish('flags', 'org-unsendable');
      await eventually(() => a.bus.pending === 1, { what: 'the announcement waiting in the outbox' });
      const started = Date.now();
      await instances.splice(0)[0].close();
      expect(Date.now() - started).toBeLessThan(7_000);
      await redis.start();
    });
  },
);

describeWithBinaries('invalidation bus on PostgreSQL LISTEN/NOTIFY, through faults', { postgres: postgresBinDir() })(
  'invalidation bus on PostgreSQL LISTEN/NOTIFY, through faults',
  () => {
    let pg: PostgresServer;
    const instances: Instance[] = [];
    const start = async () => {
      const instance = await startInstance(pg.url);
      instances.push(instance);
      return instance;
    };

    beforeAll(async () => {
      pg = await startPostgresServer();
    });
    afterEach(async () => {
      await Promise.all(instances.splice(0).map((instance) => instance.close()));
    });
    afterAll(() => pg.close());

    it('carries announcements between instances, many at once', async () => {
      const [a, b] = [await start(), await start()];
      const ids = Array.from({ length: 50 }, (_, index) => `org-${index}`);
      for (const id of ids) a.bus.publish('flags', id);
      await eventually(() => b.heard.length === ids.length, { timeoutMs: 2_000, what: 'all 50 announcements' });
      expect(b.heard).toEqual(ids);
    });

    it('survives a publishing connection killed mid-way: the announcement is retried and later ones still go out', async () => {
      const [a, b] = [await start(), await start()];
      a.bus.publish('flags', 'org-warm-up'); // opens the publishing connection
      await eventually(() => b.heard.includes('org-warm-up'), { what: 'the first announcement' });
      const admin = new Client({ connectionString: pg.url });
      await admin.connect();
      // Ends every other connection: both listeners and the publisher.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = $1', [
        'client backend',
      ]);
      await admin.end();
      a.bus.publish('flags', 'org-after-kill');
      await eventually(() => a.bus.pending === 0 && caughtUp(b, 'org-after-kill'), {
        timeoutMs: 10_000,
        what: 'the announcement after the connections were killed',
      });
      await eventually(() => b.resets > 0, { timeoutMs: 5_000, what: 'the listener listening again' });
      a.bus.publish('flags', 'org-later');
      await eventually(() => b.heard.includes('org-later'), { timeoutMs: 2_000, what: 'a later announcement' });
    });

    it('an announcement made while PostgreSQL is down is delivered once it is back', async () => {
      const [a, b] = [await start(), await start()];
      await pg.stop();
      a.bus.publish('flags', 'org-during-outage');
      await eventually(() => a.bus.pending === 1, { what: 'the announcement waiting in the outbox' });
      await pg.start();
      await eventually(() => a.bus.pending === 0 && caughtUp(b, 'org-during-outage'), {
        timeoutMs: 10_000,
        what: 'the waiting announcement reaching the other instance',
      });
      await eventually(() => b.resets > 0, { timeoutMs: 5_000, what: 'the listener listening again' });
      a.bus.publish('flags', 'org-after');
      await eventually(() => b.heard.includes('org-after'), { timeoutMs: 2_000, what: 'a new announcement after the restart' });
    });

    it('shuts down within its bound while PostgreSQL is down', async () => {
      const a = await start();
      await pg.stop();
      a.bus.publish('flags', 'org-unsendable');
      await eventually(() => a.bus.pending === 1, { what: 'the announcement waiting in the outbox' });
      const started = Date.now();
      await instances.splice(0)[0].close();
      expect(Date.now() - started).toBeLessThan(7_000);
      await pg.start();
    });
  },
);
