import request from 'supertest';
import { configEtag } from '../../src/flag-config/config-payload';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { eventually } from '../support/eventually';
import { describeWithBinaries, redisServerBinary } from '../support/servers/binaries';
import { RedisServer, startRedisServer } from '../support/servers/redis-server';
import { bearer, createApiKey, createOrganization } from '../factories/organizations.factory';
import { createTestApp, TestApp } from '../support/test-app';
import { useTestApp } from '../support/test-suite';

// The poll is served in front of Express in production; the Nest route documents it and must behave
// identically, so the whole contract runs against both.
describe.each([
  ['the lean poll path', true],
  ['the Nest route', false],
])('GET /flags/config through %s', (_path, leanConfigPoll) => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll });

  const poll = (key: string, etag?: string) => {
    const call = request(t.http).get('/v1/flags/config').set(bearer(key));
    return etag === undefined ? call : call.set('If-None-Match', etag);
  };

  it('serves every non-archived flag, ordered by key, with a weak ETag', async () => {
    await createFlag(t, org.key, { key: 'zeta', type: 'number', value: 7 });
    await createFlag(t, org.key, { key: 'alpha', type: 'json', value: { tiers: [1, 2] }, runtime: 'server' });
    await createFlag(t, org.key, { key: 'b_2', type: 'string', value: 'hi' });
    const archived = await createFlag(t, org.key, { key: 'archived-one' });
    await api(t, org.key).patch(`/flags/${archived.id}`).send({ archived: true }).expect(200);

    const response = await poll(org.key).expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['cache-control']).toBe('no-cache, must-revalidate');
    expect(response.headers.etag).toBe(`W/"${response.body.etag}"`);
    expect(response.body).toEqual({
      etag: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      generatedAt: expect.any(String),
      pollIntervalSeconds: 20,
      flags: [
        { key: 'alpha', type: 'json', value: { tiers: [1, 2] }, runtime: 'server' },
        { key: 'b_2', type: 'string', value: 'hi', runtime: 'shared' },
        { key: 'zeta', type: 'number', value: 7, runtime: 'shared' },
      ],
    });
    expect(Number.isNaN(Date.parse(response.body.generatedAt))).toBe(false);
    // The validator is a hash of the flags alone: recomputing it from the payload gives the same value.
    expect(response.body.etag).toBe(configEtag(response.body.flags));
  });

  it('serves an empty payload to an organization without flags', async () => {
    const response = await poll(org.key).expect(200);
    expect(response.body.flags).toEqual([]);
  });

  it.each([
    ['W/"<etag>"', (etag: string) => `W/"${etag}"`],
    ['"<etag>"', (etag: string) => `"${etag}"`],
    ['the bare hash', (etag: string) => etag],
    ['a list containing it', (etag: string) => `"stale", W/"${etag}" , other`],
    ['*', () => '*'],
  ])('answers 304 with an empty body when If-None-Match is %s', async (_form, header) => {
    await createFlag(t, org.key, { key: 'k' });
    const first = await poll(org.key).expect(200);
    const response = await poll(org.key, header(first.body.etag)).expect(304);
    expect(response.text).toBe('');
    expect(response.headers.etag).toBe(first.headers.etag);
    expect(response.headers['cache-control']).toBe('no-cache, must-revalidate');
  });

  it('answers 200 to a stale validator', async () => {
    await createFlag(t, org.key, { key: 'k' });
    await poll(org.key, 'W/"not-the-current-one"').expect(200);
  });

  it('shows every edit on the very next poll, and keeps the ETag when nothing changed', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const first = await poll(org.key).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'only the name' }).expect(200);
    const renamed = await poll(org.key, first.headers.etag).expect(304);
    expect(renamed.headers.etag).toBe(first.headers.etag);

    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    const changed = await poll(org.key, first.headers.etag).expect(200);
    expect(changed.body.flags).toEqual([{ key: 'k', type: 'boolean', value: false, runtime: 'shared' }]);
    expect(changed.body.etag).not.toBe(first.body.etag);

    await api(t, org.key).patch(`/flags/${flag.id}`).send({ runtime: 'server' }).expect(200);
    expect((await poll(org.key).expect(200)).body.flags[0].runtime).toBe('server');

    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
    expect((await poll(org.key).expect(200)).body.flags).toEqual([]);

    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: false }).expect(200);
    expect((await poll(org.key).expect(200)).body.flags).toHaveLength(1);

    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const deleted = await poll(org.key).expect(200);
    expect(deleted.body.flags).toEqual([]);

    await createFlag(t, org.key, { key: 'k', type: 'boolean', value: false });
    const recreated = await poll(org.key).expect(200);
    expect(recreated.body.etag).toBe(changed.body.etag);
  });

  it("never shows another organization's flags", async () => {
    const other = await createOrganization(t);
    await createFlag(t, other.key, { key: 'theirs' });
    await createFlag(t, org.key, { key: 'mine' });
    const response = await poll(org.key).expect(200);
    expect(response.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['mine']);
  });

  it('answers 401 without a valid key and 403 without FLAGS_READ', async () => {
    const missing = await request(t.http).get('/v1/flags/config').expect(401);
    expect(missing.body).toEqual({ statusCode: 401, error: 'UNAUTHORIZED', message: 'Missing or invalid API key' });
    await poll('fsk_not-a-key').expect(401);
    const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE, Permission.STORAGE_READ]);
    const forbidden = await poll(writer.key).expect(403);
    expect(forbidden.body).toEqual({ statusCode: 403, error: 'FORBIDDEN', message: 'The API key lacks the FLAGS_READ permission' });
  });
});

describe.each([
  ['the lean poll path', true],
  ['the Nest route', false],
])('GET /flags/config rate limit through %s', (_path, leanConfigPoll) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ CONFIG_RATE_LIMIT_PER_MINUTE: '3' }, { leanConfigPoll });
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After past the limit, counting per API key', async () => {
    const org = await createOrganization(t);
    const server = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    const poll = (key: string) => request(t.http).get('/v1/flags/config').set(bearer(key));
    await poll(server.key).expect(200);
    const first = await poll(server.key).expect(200);
    await poll(server.key).set('If-None-Match', first.headers.etag).expect(304);
    const limited = await poll(server.key).expect(429);
    expect(limited.body).toEqual({ statusCode: 429, error: 'RATE_LIMITED', message: expect.stringMatching(/at most 3 config requests per minute/) });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another key of the same organization has its own budget; other endpoints are not limited.
    await poll(org.key).expect(200);
    await request(t.http).get('/v1/flags/quota').set(bearer(server.key)).expect(200);
    // Authentication comes first: an unauthenticated request is a 401, never a 429.
    await request(t.http).get('/v1/flags/config').expect(401);
  });
});

describe('GET /flags/config rate limit across both paths', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ CONFIG_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => t.close());

  it('counts the lean path and the Nest route against one budget per key', async () => {
    const org = await createOrganization(t);
    const lean = () => request(t.http).get('/v1/flags/config').set(bearer(org.key));
    // Express routes a trailing slash to the Nest route, which the lean path does not claim.
    const routed = () => request(t.http).get('/v1/flags/config/').set(bearer(org.key));
    await lean().expect(200);
    await routed().expect(200);
    await lean().expect(200);
    await routed().expect(429);
    await lean().expect(429);
  });
});

// On REDIS_URL's server when one is given (CI's second run), else on a redis-server of the test's own.
describeWithBinaries('GET /flags/config rate limit across instances on one Redis', {
  'redis-server': process.env.REDIS_URL ?? redisServerBinary(),
})('GET /flags/config rate limit across instances on one Redis', () => {
  let own: RedisServer | undefined;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    if (!process.env.REDIS_URL) own = await startRedisServer();
    const env = { REDIS_URL: process.env.REDIS_URL ?? own!.url, CONFIG_RATE_LIMIT_PER_MINUTE: '5' };
    one = await createTestApp(env);
    two = await createTestApp(env, { sameDatabaseAs: one });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await own?.close();
  });

  it('counts one budget per key over both instances', async () => {
    const org = await createOrganization(one);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await request((i % 2 ? two : one).http)
        .get('/v1/flags/config')
        .set(bearer(org.key));
      statuses.push(response.status);
      if (response.status === 429) expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(55);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
  });
});

describeWithBinaries('GET /flags/config while Redis is down', { 'redis-server': redisServerBinary() })(
  'GET /flags/config while Redis is down',
  () => {
    let redis: RedisServer;
    let t: TestApp;
    let stopped = false;

    beforeAll(async () => {
      redis = await startRedisServer();
      t = await createTestApp({ REDIS_URL: redis.url, CONFIG_RATE_LIMIT_PER_MINUTE: '3' });
    });
    afterAll(async () => {
      if (stopped) await redis.start();
      await t?.close();
      await redis?.close();
    });

    it.each([
      ['the lean poll path', '/v1/flags/config'],
      ['the Nest route', '/v1/flags/config/'],
    ])('keeps answering through %s, limiting on this instance, and shares the limit again once Redis is back', async (_path, url) => {
      const org = await createOrganization(t);
      const poll = () => request(t.http).get(url).set(bearer(org.key));
      await poll().expect(200);
      await redis.stop();
      stopped = true;
      const during: number[] = [];
      for (let i = 0; i < 5; i++) during.push((await poll()).status);
      // The instance's own window: the poll made before the outage was counted in Redis, not here.
      expect(during).toEqual([200, 200, 200, 429, 429]);

      await redis.start();
      stopped = false;
      await eventually(async () => (await poll()).status === 200 && (await poll()).status === 200 && (await poll()).status === 200, {
        what: 'a fresh shared window once Redis is back (an empty Redis)',
        timeoutMs: 10_000,
        intervalMs: 1_100,
      });
    });
  },
);
