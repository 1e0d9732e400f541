import request from 'supertest';
import { ConfigStreamHub, HEARTBEAT_MS, MAX_STREAMS_PER_KEY, STREAM_LIFETIME_MS } from '../../src/flag-config/stream/config-stream.hub';
import { SLOT_RENEW_MS, SLOT_TTL_MS, StreamSlots } from '../../src/flag-config/stream/stream-slots';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { scrapeMetrics, TEST_METRICS_TOKEN } from '../support/metrics';
import { openSse, SseBlock, SseConnection } from '../support/sse-client';
import { createTestApp, TestApp } from '../support/test-app';

const STREAM = '/v1/flags/config/stream';
const isEvent = (block: SseBlock) => block.event === 'message';
const dataOf = (block: SseBlock) => JSON.parse(block.data!) as { type: string; etag: string; lastModified: number };

/**
 * GET /v1/flags/config/stream: an event with the new ETag after each change of the organization's flags, so a
 * client re-reads its config when it changed instead of polling; capped per key, kept alive, ended on a schedule.
 * The instances on this file's database read `clock`: heartbeats, lifetimes and slot expiries come when a test
 * moves it and beats the hub (what the hub's timer does every second), never after real seconds.
 */
describe('config change stream', () => {
  const clock = new FakeClock();
  let t: TestApp;
  let org: TestOrganization;
  const open: SseConnection[] = [];

  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: TEST_METRICS_TOKEN }, { clock });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    org = await createOrganization(t);
  });
  afterEach(() => {
    for (const connection of open.splice(0)) connection.close();
  });

  async function stream(app: TestApp = t, headers: Record<string, string> = bearer(org.key), query = ''): Promise<SseConnection> {
    const connection = await openSse(`${app.config.urls.publicUrl}${STREAM}${query}`, headers);
    open.push(connection);
    return connection;
  }
  /** The expiry of every slot row of an instance, in ms. */
  const slotExpiries = async (app: TestApp): Promise<number[]> => {
    const { rows } = await app.db.query<{ expires_at: Date }>('SELECT expires_at FROM config_stream_slots WHERE instance_id = $1', [
      app.app.get(StreamSlots).instanceId,
    ]);
    return rows.map((row) => row.expires_at.getTime());
  };
  const keepAlives = (connection: SseConnection) => connection.blocks.filter((block) => block.comment === 'keep-alive').length;
  const etagOf = async (app: TestApp = t) => (await request(app.http).get('/v1/flags/config').set(bearer(org.key)).expect(200)).body.etag as string;

  it('sends the current ETag on connect, as OFREP’s refetchEvaluation event', async () => {
    await createFlag(t, org.key, { key: 'double-xp' });
    const etag = await etagOf();
    const before = Math.floor(clock.now() / 1000);
    const connection = await stream();
    expect(connection.status).toBe(200);
    expect(connection.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(connection.headers.get('cache-control')).toBe('no-cache');
    const first = await connection.next(isEvent);
    expect(first.id).toBe(etag);
    expect(dataOf(first)).toEqual({ type: 'refetchEvaluation', etag, lastModified: expect.any(Number) });
    expect(dataOf(first).lastModified).toBeLessThanOrEqual(before + 1);
  });

  it('sends an event within a second of a change, with the ETag the config poll then serves', async () => {
    const flag = await createFlag(t, org.key, { key: 'double-xp' });
    const connection = await stream();
    const first = await connection.next(isEvent);
    const changedAt = Date.now();
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    const second = await connection.next((block) => isEvent(block) && block.id !== first.id, 1_000);
    expect(Date.now() - changedAt).toBeLessThan(1_000);
    const poll = await request(t.http).get('/v1/flags/config').set(bearer(org.key)).set('If-None-Match', `W/"${first.id}"`).expect(200);
    expect(poll.body.etag).toBe(second.id);
    expect(dataOf(second).etag).toBe(second.id);
  });

  it('sends nothing for a change that leaves the payload as it was (a rename), then the next real change', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const connection = await stream();
    await connection.next(isEvent);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed' }).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ runtime: 'server' }).expect(200);
    const final = await etagOf();
    // Changes are announced in order: by the time the runtime change's event is here, the rename's would be too.
    await connection.next((block) => isEvent(block) && block.id === final, 2_000);
    expect(connection.blocks.filter(isEvent).map((block) => block.id)).toEqual([expect.any(String), final]);
  });

  it('sends no event on connect when Last-Event-ID is the current ETag', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const etag = await etagOf();
    const connection = await stream(t, { ...bearer(org.key), 'Last-Event-ID': etag });
    // A heartbeat is written after anything the open wrote: once it is here, an event on connect would be too.
    clock.advance(HEARTBEAT_MS);
    t.app.get(ConfigStreamHub).beat();
    await connection.next((block) => block.comment === 'keep-alive');
    expect(connection.blocks.filter(isEvent)).toEqual([]);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    expect((await connection.next(isEvent)).id).toBe(await etagOf());
  });

  it('reaches streams on another instance within a second (the invalidation bus)', async () => {
    const other = await createTestApp({}, { sameDatabaseAs: t, clock });
    try {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const there = await stream(other);
      const first = await there.next(isEvent);
      const changedAt = Date.now();
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
      const second = await there.next((block) => isEvent(block) && block.id !== first.id, 1_000);
      expect(Date.now() - changedAt).toBeLessThan(1_000);
      expect(second.id).toBe(await etagOf());
      there.close();
    } finally {
      await other.close();
    }
  });

  describe('authentication', () => {
    it('opens with the ?token= of an OFREP bulk answer (browsers), and not with a forged one', async () => {
      const bulk = await request(t.http).post('/ofrep/v1/evaluate/flags').set(bearer(org.key)).send({ context: {} }).expect(200);
      const url = new URL(bulk.body.eventStreams[0].url);
      const connection = await stream(t, {}, url.search);
      expect(connection.status).toBe(200);
      await connection.next(isEvent);
      const [payload, signature] = url.searchParams.get('token')!.split('.');
      const forged = await stream(t, {}, `?token=${payload}.${signature.slice(1)}A`);
      expect(forged.status).toBe(401);
      expect(JSON.parse(await forged.body())).toMatchObject({
        statusCode: 401,
        error: 'UNAUTHORIZED',
        message: expect.stringMatching(/stream token/),
      });
    });

    it('ends a revoked key’s open streams, with a retry hint, and refuses its token afterwards', async () => {
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const bulk = await request(t.http).post('/ofrep/v1/evaluate/flags').set(bearer(reader.key)).send({ context: {} }).expect(200);
      const tokenQuery = new URL(bulk.body.eventStreams[0].url).search;
      const byHeader = await stream(t, bearer(reader.key));
      const byToken = await stream(t, {}, tokenQuery);
      await Promise.all([byHeader.next(isEvent), byToken.next(isEvent)]);
      await admin(t).delete(`/organizations/${org.id}/api-keys/${reader.id}`).expect(204);
      await Promise.all([byHeader.ended, byToken.ended]);
      expect(byHeader.blocks.at(-1)).toEqual({ retry: expect.any(Number) });
      expect((await stream(t, {}, tokenQuery)).status).toBe(401);
      expect((await stream(t, bearer(reader.key))).status).toBe(401);
    });

    it('answers 401 without a key and 403 without FLAGS_READ', async () => {
      const none = await stream(t, {});
      expect(none.status).toBe(401);
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      const forbidden = await stream(t, bearer(writer.key));
      expect(forbidden.status).toBe(403);
      expect(JSON.parse(await forbidden.body())).toMatchObject({ error: 'FORBIDDEN' });
    });
  });

  describe('limits', () => {
    it('holds at most 20 open streams per key: the 21st is a 429 with Retry-After', async () => {
      const connections = [];
      for (let index = 0; index < 20; index += 1) connections.push(await stream());
      expect(connections.every((connection) => connection.status === 200)).toBe(true);
      const refused = await stream();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(JSON.parse(await refused.body())).toMatchObject({ error: 'RATE_LIMITED', message: expect.stringMatching(/20 open streams/) });
      const otherKey = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      expect((await stream(t, bearer(otherKey.key))).status).toBe(200);
      connections[0].close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await stream()).status).toBe(200);
    });

    it('holds the cap when opens race for a key’s last places', async () => {
      const racing = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const connections = await Promise.all(Array.from({ length: 40 }, () => stream(t, bearer(racing.key))));
      const statuses = connections.map((connection) => connection.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(20);
      expect(statuses.filter((status) => status === 429)).toHaveLength(20);
      await Promise.all(connections.filter((connection) => connection.status === 429).map((connection) => connection.body()));
    });

    it('holds the cap of 20 across instances, and a stream closed on one makes room on the other', async () => {
      const other = await createTestApp({}, { sameDatabaseAs: t, clock });
      try {
        const here = [];
        for (let index = 0; index < 12; index += 1) here.push(await stream(t));
        for (let index = 0; index < 8; index += 1) expect((await stream(other)).status).toBe(200);
        for (const app of [t, other]) {
          const refused = await stream(app);
          expect(refused.status).toBe(429);
          expect(refused.headers.get('retry-after')).toBe('60');
          await refused.body();
        }
        expect(here.every((connection) => connection.status === 200)).toBe(true);
        here[0].close();
        // The close reaches the server, which deletes the slot's row: until then the other instance refuses.
        let reopened = 0;
        await eventually(
          async () => {
            const connection = await stream(other);
            reopened = connection.status;
            if (reopened !== 200) await connection.body();
            return reopened === 200;
          },
          { intervalMs: 50, what: 'a stream reopened on the other instance' },
        );
        expect(reopened).toBe(200);
      } finally {
        await other.close();
      }
    });

    it('stops counting the streams of an instance that no longer renews them, and not before', async () => {
      const other = await createTestApp({}, { sameDatabaseAs: t, clock });
      try {
        for (let index = 0; index < MAX_STREAMS_PER_KEY; index += 1) expect((await stream(other)).status).toBe(200);
        const hub = t.app.get(ConfigStreamHub);
        const start = clock.now();
        expect(await hub.reserve(org.keyId)).toBeNull();
        // The instance renews its slots while its streams run: still counted past the first expiry.
        clock.set(start + SLOT_RENEW_MS);
        other.app.get(ConfigStreamHub).beat();
        await eventually(async () => (await slotExpiries(other)).every((expiry) => expiry >= start + SLOT_RENEW_MS + SLOT_TTL_MS), {
          what: 'the renewal of the other instance’s slots',
        });
        clock.set(start + SLOT_TTL_MS + 1_000);
        expect(await hub.reserve(org.keyId)).toBeNull();
        // Had it died at the renewal, its slots would stop counting once that renewal expires.
        clock.set(start + SLOT_RENEW_MS + SLOT_TTL_MS + 1_000);
        const slot = await hub.reserve(org.keyId);
        expect(slot).not.toBeNull();
        slot!.release();
      } finally {
        await other.close();
      }
    });

    it('gives back every slot of an instance when it shuts down', async () => {
      const closing = await createTestApp({}, { sameDatabaseAs: t, clock });
      const connections = [];
      for (let index = 0; index < MAX_STREAMS_PER_KEY; index += 1) connections.push(await stream(closing));
      expect((await stream(t)).status).toBe(429);
      await closing.close();
      await Promise.all(connections.map((connection) => connection.ended));
      const opened = await stream(t);
      expect(opened.status).toBe(200);
    });

    it('counts on this instance alone while the slots cannot be read (the database is away), and keeps serving', async () => {
      const unavailable = {
        take: () => Promise.reject(new Error('connection refused')),
        release: () => Promise.resolve(),
        renew: () => Promise.resolve(),
        releaseAll: () => Promise.resolve(),
      };
      const alone = await createTestApp({}, { overrides: [{ provide: StreamSlots, useValue: unavailable }] });
      try {
        const owner = await createOrganization(alone);
        const connections = [];
        for (let index = 0; index < MAX_STREAMS_PER_KEY; index += 1) connections.push(await stream(alone, bearer(owner.key)));
        expect(connections.every((connection) => connection.status === 200)).toBe(true);
        const refused = await stream(alone, bearer(owner.key));
        expect(refused.status).toBe(429);
        await refused.body();
        for (const connection of connections) connection.close();
      } finally {
        await alone.close();
      }
    });

    it('counts opening a stream against the config budget', async () => {
      const limited = await createTestApp({ CONFIG_RATE_LIMIT_PER_MINUTE: '2' });
      try {
        const owner = await createOrganization(limited);
        const first = await openSse(`${limited.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
        await request(limited.http).get('/v1/flags/config').set(bearer(owner.key)).expect(200);
        const refused = await openSse(`${limited.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
        expect(first.status).toBe(200);
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(JSON.parse(await refused.body())).toMatchObject({ error: 'RATE_LIMITED' });
        first.close();
      } finally {
        await limited.close();
      }
    });
  });

  it('counts open streams in flagstore_stream_connections', async () => {
    const gauge = async () => Number(/^flagstore_stream_connections (\d+)$/m.exec((await scrapeMetrics(t)).text)![1]);
    const before = await gauge();
    const connections = [await stream(), await stream()];
    await Promise.all(connections.map((connection) => connection.next(isEvent)));
    expect(await gauge()).toBe(before + 2);
    connections[0].close();
    await eventually(async () => (await gauge()) === before + 1, { intervalMs: 20, what: 'the gauge down by the closed stream' });
    expect(await gauge()).toBe(before + 1);
  });

  describe('time (the hub’s clock moved, not waited for)', () => {
    it('writes a comment every heartbeat and ends a stream after 10 minutes with a retry hint', async () => {
      const opened = clock.now();
      const connection = await stream();
      await connection.next(isEvent);
      const hub = t.app.get(ConfigStreamHub);
      clock.set(opened + HEARTBEAT_MS);
      hub.beat();
      expect(await connection.next((block) => block.comment === 'keep-alive')).toEqual({ comment: 'keep-alive' });
      // Silent since that heartbeat: this beat writes another one rather than the end, and once it is here, so would the end be.
      clock.set(opened + STREAM_LIFETIME_MS - 5_000);
      hub.beat();
      await connection.next((block) => block.comment === 'keep-alive' && keepAlives(connection) === 2);
      expect(connection.blocks.some((block) => block.retry !== undefined)).toBe(false);
      clock.set(opened + STREAM_LIFETIME_MS + 1_000);
      hub.beat();
      await connection.ended;
      const retry = connection.blocks.at(-1)!.retry!;
      expect(retry).toBeGreaterThanOrEqual(1_000);
      expect(retry).toBeLessThan(2_000);
    });

    it('ends every stream with a retry hint when the app shuts down', async () => {
      const closing = await createTestApp();
      const owner = await createOrganization(closing);
      const connection = await openSse(`${closing.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
      await connection.next(isEvent);
      await closing.close();
      await connection.ended;
      expect(connection.blocks.at(-1)).toEqual({ retry: expect.any(Number) });
    });

    it('refuses new streams with 503 once shutdown has begun (SIGTERM ends the streams first)', async () => {
      const closing = await createTestApp();
      try {
        const owner = await createOrganization(closing);
        const connection = await openSse(`${closing.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
        await connection.next(isEvent);
        closing.app.get(ConfigStreamHub).closeAll(); // what main.ts does on SIGTERM, before draining
        await connection.ended;
        const refused = await openSse(`${closing.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toBe('1');
        expect(JSON.parse(await refused.body())).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
      } finally {
        await closing.close();
      }
    });

    it('refuses with 503, and gives the slot back, a stream whose shutdown began while its slot was being taken', async () => {
      let duringTake = () => {};
      const released: string[] = [];
      const slots = {
        take: async () => {
          duringTake();
          return 'f0a3e2c4-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
        },
        release: async (id: string) => void released.push(id),
        renew: () => Promise.resolve(),
        releaseAll: () => Promise.resolve(),
      };
      const closing = await createTestApp({}, { overrides: [{ provide: StreamSlots, useValue: slots }] });
      try {
        const owner = await createOrganization(closing);
        const hub = closing.app.get(ConfigStreamHub);
        duringTake = () => hub.closeAll();
        const refused = await openSse(`${closing.config.urls.publicUrl}${STREAM}`, bearer(owner.key));
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toBe('1');
        await refused.body();
        expect(hub.size).toBe(0);
        expect(released).toEqual(['f0a3e2c4-5b6d-4e7f-8a9b-0c1d2e3f4a5b']);
      } finally {
        await closing.close();
      }
    });
  });
});
