import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { PostgresServer, startPostgresServer } from '../support/servers/postgres-server';
import { RedisServer, startRedisServer } from '../support/servers/redis-server';
import { eventually } from '../support/eventually';
import { S3Server, startS3Server } from '../support/servers/s3-server';
import { describeOutcomes, failed, Load, LoadOptions, Outcome, succeeded } from './load';
import {
  call,
  describeWithTopologyBinaries,
  Instance,
  keepAliveAgent,
  migrate,
  Nginx,
  removeDir,
  Reply,
  startNginx,
  tail,
  tempDir,
  within,
} from './topology';

/*
 * The deployment as an operator runs it: three instances of the built service (`node dist/main.js`, separate
 * processes) behind nginx, on a PostgreSQL, a Redis and an S3 store (s3rver) of the test's own, all on
 * 127.0.0.1. It checks what README ("Running several instances", "Operations") promises across instances and through faults.
 *
 * Bounds: every hook and test has its own timeout (their sum is under 10 minutes), every loop is bounded in
 * count and time, and every process is ended by PID in afterAll.
 */

const LIMIT = 1200;
const ADMIN_TOKEN = 'topology-admin-token-0123456789abcdef';
const UPLOAD_SIGNING_SECRET = 'topology-upload-signing-secret-0123456789';
/** How soon another instance must hear of an edit or a revocation. */
const HEARD_WITHIN_MS = 1_000;
/** Polls per second of the load loops, over LOAD_KEYS keys: 12.5 per key per second, 750 a minute, under LIMIT. */
const LOAD_POLLS_PER_SECOND = 250;
const LOAD_KEYS = 20;

const TIMEOUT = {
  beforeAll: 100_000,
  afterAll: 50_000,
  limit: 60_000,
  edit: 20_000,
  revoke: 20_000,
  upload: 20_000,
  rolling: 150_000,
  postgres: 80_000,
  redis: 80_000,
}; // 580 s in all

describeWithTopologyBinaries('the topology test')('three instances behind nginx, on PostgreSQL, Redis and S3 of their own', () => {
  let root: string;
  let pg: PostgresServer | undefined;
  let redis: RedisServer | undefined;
  let s3: S3Server | undefined;
  let nginx: Nginx | undefined;
  const instances: Instance[] = [];
  let org: { id: string; key: string };
  let flagId: string;
  let loadKeys: string[];

  const adminAuth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  /** Every process's recent output, printed when a check fails. */
  const diagnostics = () =>
    [
      ...instances.map((instance) => `----- ${instance.name} (${instance.url}, ${instance.logFile}):\n${tail(instance.logFile, 40)}`),
      nginx ? `----- nginx (${nginx.url}):\n${nginx.logs()}\n----- nginx access.log:\n${tail(join(nginx.dir, 'access.log'), 20)}` : '',
    ].join('\n');

  /** Runs a check; on failure, prints and attaches the tail of every instance's and nginx's logs. */
  const reported = async (check: () => Promise<void>) => {
    try {
      await check();
    } catch (error) {
      const report = `\n\n===== logs at the failure =====\n${diagnostics()}`;
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}${report}\n`);
      if (error instanceof Error) {
        error.message += report;
        if (error.stack) error.stack += report;
      }
      throw error;
    }
  };

  const [one, two, three] = [0, 1, 2].map((index) => () => instances[index]);

  async function admin(instance: Instance, method: string, path: string, body?: object): Promise<Reply> {
    return call(instance.url, `/v1/admin${path}`, { method, headers: adminAuth, body });
  }

  async function createKey(permissions: string[], name = 'topology'): Promise<{ id: string; key: string }> {
    const reply = await admin(one(), 'POST', `/organizations/${org.id}/api-keys`, { name, permissions });
    if (reply.status !== 201) throw new Error(`creating a key answered ${reply.status}: ${reply.body.toString()}`);
    return reply.json();
  }

  function poll(instance: Instance, key: string, agent?: Agent): Promise<Reply> {
    return call(instance.url, '/v1/flags/config', { headers: { Authorization: `Bearer ${key}` }, agent });
  }

  /** 1,300 polls of one fresh key, round-robin over the three instances directly, 6 at a time. */
  async function burst(key: string) {
    const agents = instances.map(() => keepAliveAgent());
    const statuses: Record<string, number> = {};
    const badRetryAfter: string[] = [];
    let next = 0;
    const deadline = Date.now() + 40_000;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (;;) {
          const index = next++;
          if (index >= 1300 || Date.now() > deadline) return;
          const reply = await poll(instances[index % 3], key, agents[index % 3]);
          statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
          if (reply.status === 429) {
            const retryAfter = reply.headers['retry-after'];
            const seconds = Number(retryAfter);
            if (typeof retryAfter !== 'string' || !Number.isInteger(seconds) || seconds < 1 || seconds > 60) {
              badRetryAfter.push(String(retryAfter));
            }
          }
        }
      }),
    );
    for (const agent of agents) agent.destroy();
    const admitted = (statuses['200'] ?? 0) + (statuses['304'] ?? 0);
    return { statuses, admitted, limited: statuses['429'] ?? 0, badRetryAfter, sent: Math.min(next, 1300) };
  }

  /** A burst of a fresh key's polls over the three instances admits 1,188 to LIMIT of them, with sane Retry-After. */
  async function expectSharedLimit(keyName: string): Promise<void> {
    const { key } = await createKey(['FLAGS_READ'], keyName);
    const result = await burst(key);
    process.stdout.write(`shared limit: ${JSON.stringify(result)}\n`);
    expect(result.sent).toBe(1300);
    expect(Object.keys(result.statuses).sort()).toEqual(['200', '429']);
    expect(result.admitted).toBeGreaterThanOrEqual(1188);
    expect(result.admitted).toBeLessThanOrEqual(LIMIT);
    expect(result.admitted + result.limited).toBe(1300);
    expect(result.badRetryAfter).toEqual([]);
  }

  /** Polls every instance until `check` holds on each; how long the slowest took (from `since`), or undefined. */
  async function heardEverywhere(since: number, key: string, check: (reply: Reply) => boolean, timeoutMs = HEARD_WITHIN_MS) {
    const times = await Promise.all(
      instances.map(async (instance) => {
        const took = await within(timeoutMs + 500, async () => check(await poll(instance, key)), 10);
        return took === undefined ? undefined : Date.now() - since;
      }),
    );
    return times;
  }

  /** A key polled on every instance, revoked through `via`: every instance must refuse it within 1 s. */
  async function expectRevocationHeardEverywhere(name: string, via: Instance): Promise<void> {
    const key = await createKey(['FLAGS_READ'], name);
    for (const instance of instances) expect((await poll(instance, key.key)).status).toBe(200);
    expect((await admin(via, 'DELETE', `/organizations/${org.id}/api-keys/${key.id}`)).status).toBe(204);
    const since = Date.now();
    const times = await heardEverywhere(since, key.key, (reply) => reply.status === 401);
    process.stdout.write(`revocation heard after (ms): ${JSON.stringify(times)}\n`);
    expect(times.every((ms) => ms !== undefined && ms <= HEARD_WITHIN_MS)).toBe(true);
  }

  /**
   * Whether, in the load's outcomes since `since`, every instance (as nginx names it) answered a poll of every
   * load key with 2xx/304, and a write that `write` accepts (by default: 2xx). What each phase of a fault test
   * waits for before the next, where it used to pause for a fixed time.
   */
  function served(load: Load, since: number, write: (outcome: Outcome) => boolean = succeeded) {
    const recent = load.outcomes.filter((outcome) => outcome.startedAt >= since);
    return instances.map((instance) => {
      const answered = recent.filter((outcome) => outcome.upstreamPort === instance.port);
      const keys = new Set(answered.filter((outcome) => outcome.kind === 'poll' && succeeded(outcome)).map((outcome) => outcome.key));
      return { instance: instance.name, keys: keys.size, write: answered.some((outcome) => outcome.kind === 'write' && write(outcome)) };
    });
  }

  async function untilEveryInstanceServes(
    what: string,
    load: Load,
    since: number,
    write?: (outcome: Outcome) => boolean,
    timeoutMs = 10_000,
  ): Promise<void> {
    const done = () => served(load, since, write).every((each) => each.keys === loadKeys.length && each.write);
    try {
      await eventually(done, { timeoutMs, intervalMs: 50, what: `every instance serving every load key and a write ${what}` });
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(served(load, since, write))} (of ${loadKeys.length} keys)`, { cause: error });
    }
  }

  function loadOptions(flagPrefix: string, maxDurationMs: number, writers = 1): LoadOptions {
    return {
      baseUrl: nginx!.url,
      pollKeys: loadKeys,
      pollsPerSecond: LOAD_POLLS_PER_SECOND,
      pollWorkers: 16,
      writeKey: org.key,
      writeIntervalMs: 100,
      writers,
      flagPrefix,
      maxCreates: 12,
      maxDurationMs,
      maxPolls: Math.ceil((LOAD_POLLS_PER_SECOND * maxDurationMs) / 1000),
      maxWrites: Math.ceil(maxDurationMs / 100) * writers,
    };
  }

  beforeAll(async () => {
    root = tempDir('flagstore-topology-');
    [pg, redis, s3] = await Promise.all([startPostgresServer(), startRedisServer(), startS3Server(join(root, 's3'))]);
    migrate(pg.url, join(root, 'migrate'));

    const ports = new Set<number>();
    while (ports.size < 4) ports.add(await freePort());
    const [nginxPort, ...instancePorts] = [...ports];
    const env = {
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      ...s3.env,
      UPLOAD_SIGNING_SECRET,
      ADMIN_TOKEN,
      CONFIG_RATE_LIMIT_PER_MINUTE: String(LIMIT),
      PUBLIC_URL: `http://127.0.0.1:${nginxPort}`,
    };
    instancePorts.forEach((port, index) => instances.push(new Instance(`instance-${index + 1}`, port, join(root, `instance-${index + 1}`), env)));
    await reported(async () => {
      await Promise.all(instances.map((instance) => instance.start()));
      nginx = await startNginx(join(root, 'nginx'), nginxPort, instancePorts);
    });

    const created = await admin(one(), 'POST', '/organizations', { name: 'Topology Studio' });
    expect(created.status).toBe(201);
    org = { id: created.json().id, key: '' };
    expect((await admin(one(), 'POST', `/organizations/${org.id}/subscriptions`, { plan: 'pro' })).status).toBe(201);
    org.key = (await createKey(['FLAGS_READ', 'FLAGS_WRITE', 'STORAGE_READ', 'STORAGE_WRITE'], 'everything')).key;
    const flag = await call(one().url, '/v1/flags', {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.key}` },
      body: { key: 'topology', name: 'Topology', type: 'boolean', value: true },
    });
    expect(flag.status).toBe(201);
    flagId = flag.json().id;
    loadKeys = [];
    for (let i = 0; i < LOAD_KEYS; i += 1) loadKeys.push((await createKey(['FLAGS_READ'], `load-${i}`)).key);
  }, TIMEOUT.beforeAll);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.end()));
    await nginx?.close();
    await Promise.all([pg?.close(), redis?.close(), s3?.close()]);
    // TOPOLOGY_KEEP_LOGS=1 keeps the instances' and nginx's logs (the databases are gone either way).
    if (process.env.TOPOLOGY_KEEP_LOGS === '1') process.stdout.write(`topology logs kept in ${root}\n`);
    else removeDir(root);
  }, TIMEOUT.afterAll);

  it(
    'shares the rate limit: 1,300 polls of one key over the three instances admit 1,188 to 1,200',
    () =>
      reported(async () => {
        await expectSharedLimit('limit');
      }),
    TIMEOUT.limit,
  );

  it(
    'shows an edit made through one instance on the other two within 1 s',
    () =>
      reported(async () => {
        const valueOf = (reply: Reply) =>
          reply.status === 200
            ? reply.json<{ flags: Array<{ key: string; value: unknown }> }>().flags.find((f) => f.key === 'topology')?.value
            : undefined;
        // The others hold the current payload in memory: they must be told.
        for (const instance of [two(), three()]) expect(valueOf(await poll(instance, org.key))).toBe(true);
        const edit = await call(one().url, `/v1/flags/${flagId}`, {
          method: 'PATCH',
          headers: { Authorization: `Bearer ${org.key}` },
          body: { type: 'boolean', value: false },
        });
        expect(edit.status).toBe(200);
        const since = Date.now();
        const times = await heardEverywhere(since, org.key, (reply) => valueOf(reply) === false);
        process.stdout.write(`edit heard after (ms): ${JSON.stringify(times)}\n`);
        expect(times.every((ms) => ms !== undefined && ms <= HEARD_WITHIN_MS)).toBe(true);
      }),
    TIMEOUT.edit,
  );

  it(
    'refuses a key revoked through one instance on every instance within 1 s',
    () =>
      reported(async () => {
        await expectRevocationHeardEverywhere('revoked', one());
      }),
    TIMEOUT.revoke,
  );

  it(
    'takes an upload signed by instance 1 on instance 2 and serves it from instance 3',
    () =>
      reported(async () => {
        const bytes = randomBytes(256 * 1024 + 17);
        const signed = await call(one().url, `/v1/storage/signed-url?contentType=image/png&size=${bytes.length}`, {
          headers: { Authorization: `Bearer ${org.key}` },
        });
        expect(signed.status).toBe(200);
        const { url, mediaUrl } = signed.json<{ url: string; mediaUrl: string }>();
        // Signed URLs point at the public address (nginx), whichever instance signed them.
        expect(new URL(url).host).toBe(new URL(nginx!.url).host);
        expect(new URL(mediaUrl).host).toBe(new URL(nginx!.url).host);

        const onTwo = new URL(url);
        onTwo.host = new URL(two().url).host;
        const upload = await call(onTwo.toString(), onTwo.pathname + onTwo.search, {
          method: 'PUT',
          headers: { 'Content-Type': 'image/png' },
          body: bytes,
        });
        expect({ status: upload.status, body: upload.status === 200 ? 'ok' : upload.body.toString() }).toEqual({ status: 200, body: 'ok' });
        expect(new URL(upload.json<{ mediaUrl: string }>().mediaUrl).pathname).toBe(new URL(mediaUrl).pathname);

        const served = await call(three().url, new URL(mediaUrl).pathname);
        expect(served.status).toBe(200);
        expect(served.headers['content-type']).toBe('image/png');
        expect(served.body.length).toBe(bytes.length);
        expect(served.body.equals(bytes)).toBe(true);
      }),
    TIMEOUT.upload,
  );

  it(
    'survives a rolling restart under load through nginx with 0 failed requests',
    () =>
      reported(async () => {
        // Four writers (about 40 writes a second besides 250 polls): a write must meet whatever an instance's
        // shutdown does to connections, not only the odd poll.
        const load = new Load(loadOptions('rolling', 120_000, 4));
        const errorLogAt = nginx!.logOffset('error.log');
        const loadStarted = Date.now();
        load.start();
        const exits: Array<{ instance: string; code: number | string | undefined; ms: number }> = [];
        try {
          await untilEveryInstanceServes('through nginx', load, loadStarted);
          let lastStarted = loadStarted;
          for (const instance of instances) {
            instance.mark('rolling restart: SIGTERM');
            const started = Date.now();
            const code = await instance.terminate(25_000);
            exits.push({ instance: instance.name, code, ms: Date.now() - started });
            lastStarted = Date.now();
            await instance.start();
            // Serving again before the next one goes: it answers every load key (nginx may still leave it out for
            // its fail_timeout; the load then meets the next restart with one instance fewer in nginx's rotation).
            for (const key of loadKeys) expect((await poll(instance, key)).status).toBe(200);
          }
          // The load runs until nginx sends it to every restarted instance again (after its fail_timeout, 10 s).
          await untilEveryInstanceServes('after the rolling restart', load, lastStarted, succeeded, 25_000);
        } finally {
          await load.stop();
        }
        const failures = load.outcomes.filter(failed);
        const summary = {
          exits,
          polls: Load.statuses(load.polls),
          writes: Load.statuses(load.writes),
          failures: failures.length,
          firstFailures: describeOutcomes(failures),
        };
        process.stdout.write(`rolling restart: ${JSON.stringify({ ...summary, firstFailures: undefined })}\n`);
        expect(summary.exits.map(({ instance, code }) => ({ instance, code }))).toEqual(
          instances.map((instance) => ({ instance: instance.name, code: 0 })),
        );
        expect(load.polls.length).toBeGreaterThan(2_000);
        expect(load.writes.length).toBeGreaterThan(100);
        expect({ failures: summary.failures, firstFailures: summary.firstFailures }).toEqual({ failures: 0, firstFailures: '' });
        // Every write was taken: nothing refused for any reason.
        expect(load.writes.every((write) => write.status === 200 || write.status === 201)).toBe(true);
        // And nginx never met a reset or a close on a request it had sent (what it does not pass on for a POST or
        // PATCH, so a 502): HttpDrain's promise. Refused connections are fine: nothing was sent, nginx passes on.
        expect(upstreamCutsOff(nginx!.logFrom('error.log', errorLogAt))).toEqual([]);
      }),
    TIMEOUT.rolling,
  );

  it(
    'survives a PostgreSQL restart: 0 failed polls, 503 for writes meanwhile, writes back within 10 s, revocation still heard',
    () =>
      reported(async () => {
        // Every instance has authenticated every load key (a restarted instance may have been left out by nginx
        // for its fail_timeout): polls of keys it knows are what it must keep answering without the database.
        for (const instance of instances) {
          for (const key of loadKeys) expect((await poll(instance, key)).status).toBe(200);
        }
        const accessLogAt = nginx!.logOffset('access.log');
        const load = new Load(loadOptions('postgres', 45_000));
        const loadStarted = Date.now();
        load.start();
        let stopped = 0;
        let restarting = 0;
        let restarted = 0;
        let firstWriteBack: number | undefined;
        try {
          await untilEveryInstanceServes('through nginx', load, loadStarted);
          for (const instance of instances) instance.mark('PostgreSQL stop');
          await pg!.stop('SIGINT');
          stopped = Date.now();
          // The outage lasts until every instance has served every key without its database and answered a write
          // (whatever it answered: judged below), and more than five writes were answered in it.
          await untilEveryInstanceServes('without the database', load, stopped, () => true);
          await eventually(() => load.writes.filter((write) => write.startedAt >= stopped).length > 5, {
            timeoutMs: 10_000,
            intervalMs: 50,
            what: 'six writes answered during the outage',
          });
          restarting = Date.now();
          await pg!.start();
          restarted = Date.now();
          await within(15_000, async () => load.writes.some((write) => write.startedAt >= restarted && write.status < 300), 50);
          firstWriteBack = load.writes.find((write) => write.startedAt >= restarted && write.status < 300)?.endedAt;
          await untilEveryInstanceServes('after the restart', load, restarted);
        } finally {
          await load.stop();
        }
        const pollFailures = load.polls.filter(failed);
        const during = load.writes.filter((write) => write.startedAt >= stopped && write.endedAt <= restarting);
        const unexpectedWrites = load.writes.filter(
          (write) => !(write.status < 300 || (write.status === 503 && write.code === 'SERVICE_UNAVAILABLE')),
        );
        process.stdout.write(
          `PostgreSQL restart: ${JSON.stringify({
            polls: Load.statuses(load.polls),
            writes: Load.statuses(load.writes),
            writesDuringOutage: Load.statuses(during),
            outageMs: restarting - stopped,
            writesBackAfterMs: firstWriteBack === undefined ? null : firstWriteBack - restarted,
          })}\n`,
        );
        expect({ pollFailures: pollFailures.length, first: describeOutcomes(pollFailures) }).toEqual({ pollFailures: 0, first: '' });
        // Not even one that nginx retried elsewhere: no instance answered a poll with an error.
        const pollErrors = nginx!
          .logFrom('access.log', accessLogAt)
          .split('\n')
          .filter((line) => line.includes('/v1/flags/config') && /upstream_status=\S*(50\d)/.test(line));
        expect(pollErrors).toEqual([]);
        // Writes during the outage are 503 SERVICE_UNAVAILABLE (never 500), answered within 10 s.
        expect(during.length).toBeGreaterThan(5);
        expect(describeOutcomes(during.filter((write) => write.status !== 503 || write.code !== 'SERVICE_UNAVAILABLE'))).toBe('');
        expect({ unexpected: describeOutcomes(unexpectedWrites) }).toEqual({ unexpected: '' });
        expect(Math.max(...load.writes.map((write) => write.endedAt - write.startedAt))).toBeLessThan(10_000);
        // Writes succeed again within 10 s of the restart.
        expect(firstWriteBack).toBeDefined();
        expect(firstWriteBack! - restarted).toBeLessThan(10_000);

        // A key revoked now is refused by every instance within 1 s.
        await expectRevocationHeardEverywhere('revoked-after-postgres', two());
      }),
    TIMEOUT.postgres,
  );

  it(
    'survives a Redis restart: 0 failed polls, an edit made meanwhile reaches every instance, the shared limit holds again',
    () =>
      reported(async () => {
        const load = new Load(loadOptions('redis', 40_000));
        const loadStarted = Date.now();
        load.start();
        const markers = new Map<Instance, string>();
        let editDuringOutage: Reply | undefined;
        let recovered: number | undefined;
        let editHeard: number | undefined;
        const valueOf = (reply: Reply) =>
          reply.status === 200
            ? reply.json<{ flags: Array<{ key: string; value: unknown }> }>().flags.find((f) => f.key === 'topology')?.value
            : undefined;
        try {
          await untilEveryInstanceServes('through nginx', load, loadStarted);
          for (const instance of instances) markers.set(instance, instance.mark('Redis stop'));
          await redis!.stop();
          // Every instance knows the bus is down: both its connections say they are lost.
          await eventually(() => instances.every((instance) => lostRedis(instance.logSince(markers.get(instance)!))), {
            timeoutMs: 10_000,
            intervalMs: 50,
            what: 'every instance noticing that Redis is gone',
          });
          // An edit while the bus is down: announced once Redis is back (or every cache is dropped then).
          editDuringOutage = await call(three().url, `/v1/flags/${flagId}`, {
            method: 'PATCH',
            headers: { Authorization: `Bearer ${org.key}` },
            body: { type: 'boolean', value: true },
          });
          // The outage lasts until every instance has served every key and a write without Redis.
          await untilEveryInstanceServes('without Redis', load, Date.now());
          await redis!.start();
          const restarted = Date.now();
          // Each instance is back on Redis: its connections say so, and its limiter shares counts again.
          recovered = await within(15_000, async () => instances.every((instance) => backOnRedis(instance.logSince(markers.get(instance)!))), 100);
          editHeard = await within(
            10_000,
            async () => {
              const replies = await Promise.all([one(), two()].map((instance) => poll(instance, org.key)));
              return replies.every((reply) => valueOf(reply) === true);
            },
            50,
          );
          if (editHeard !== undefined) editHeard = Date.now() - restarted;
          await untilEveryInstanceServes('back on Redis', load, Date.now());
        } finally {
          await load.stop();
        }
        const failures = load.outcomes.filter(failed);
        process.stdout.write(
          `Redis restart: ${JSON.stringify({
            polls: Load.statuses(load.polls),
            writes: Load.statuses(load.writes),
            recoveredAfterMs: recovered,
            editHeardAfterRestartMs: editHeard,
          })}\n`,
        );
        expect(editDuringOutage?.status).toBe(200);
        expect({ failures: failures.length, first: describeOutcomes(failures) }).toEqual({ failures: 0, first: '' });
        expect(recovered).toBeDefined();
        expect(editHeard).toBeDefined();

        // The limit is shared again: a fresh key over the three instances stops at the limit, not at 3x it.
        await expectSharedLimit('limit-after-redis');
      }),
    TIMEOUT.redis,
  );
});

/** Whether an instance's log since Redis went away says both its connections (commands, subscriber) are lost. */
function lostRedis(log: string): boolean {
  return log.includes('Redis commands connection lost') && log.includes('Redis subscriber connection lost');
}

/**
 * Whether an instance's log since Redis went away shows it back: each Redis connection that said it was lost
 * says it is back after that, and the limiter, if it fell back to counting alone, says it shares again.
 */
function backOnRedis(log: string): boolean {
  const pairs: Array<[string, string]> = [
    ['Redis commands connection lost', 'Redis commands connection is back'],
    ['Redis subscriber connection lost', 'Redis subscriber connection is back'],
    ['Rate limit store unavailable', 'Rate limit store answers again'],
  ];
  return pairs.every(([down, up]) => {
    const lastDown = log.lastIndexOf(down);
    return lastDown === -1 || log.indexOf(up, lastDown) !== -1;
  });
}

/** nginx's errors about an upstream that reset or closed a connection after the request was sent to it. */
function upstreamCutsOff(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => /\[error\]/.test(line) && !/while connecting to upstream/.test(line))
    .filter((line) => /reset by peer|prematurely closed|broken pipe|while sending request to upstream|while reading response header/i.test(line));
}
