import request from 'supertest';
import { api, createFlag } from '../../test/factories/flags.factory';
import { admin, bearer, createApiKey } from '../../test/factories/organizations.factory';
import { useTestApp } from '../../test/support/test-suite';
import { Permission } from '../../src/auth/permission';
import { FlagstoreError } from '../src';
import { collectErrors, nextChange, nextError, tick, useClients } from './support/client-harness';
import { errorResponse, RecordingFetch } from './support/recording-fetch';

describe('FlagstoreClient polling', () => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true });
  const newClient = useClients();
  const connect = (options: { random?: () => number } = {}, recorder?: RecordingFetch) =>
    newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, ...options }, recorder);
  const currentEtag = async () => (await request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200)).body.etag as string;

  it('polls every pollIntervalSeconds with the weak ETag in If-None-Match, and a 304 keeps the values', async () => {
    await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    const { client, scheduler, recorder } = connect();
    const changes = jest.fn();
    client.on('change', changes);
    await client.ready();
    const etag = await currentEtag();

    expect(recorder.polls).toHaveLength(1);
    expect(recorder.polls[0]).toMatchObject({ status: 200, headers: { authorization: `Bearer ${org.key}` } });
    expect(recorder.polls[0].headers).not.toHaveProperty('if-none-match');
    expect(scheduler.pending()).toEqual([20_000]); // the payload's pollIntervalSeconds

    for (let poll = 2; poll <= 3; poll++) {
      expect(await tick(scheduler)).toBe(20_000);
      expect(recorder.polls).toHaveLength(poll);
      expect(recorder.polls[poll - 1]).toMatchObject({ status: 304, headers: { 'if-none-match': `W/"${etag}"` } });
    }
    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    expect(changes).not.toHaveBeenCalled();
  });

  it('jitters the interval by ±10 %', async () => {
    const early = connect({ random: () => 0 });
    const late = connect({ random: () => 0.999 });
    await Promise.all([early.client.ready(), late.client.ready()]);

    expect(early.scheduler.pending()).toEqual([18_000]);
    expect(late.scheduler.pending()[0]).toBeCloseTo(21_996, 6);
  });

  it('sees a change through polling: the keys changed, added and removed, and their new values', async () => {
    await createFlag(t, org.key, { key: 'untouched', type: 'number', value: 1 });
    const motd = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
    const retired = await createFlag(t, org.key, { key: 'retired', type: 'boolean', value: true });
    const { client, scheduler, recorder } = connect();
    await client.ready();

    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP!' }).expect(200);
    await api(t, org.key).patch(`/flags/${retired.id}`).send({ archived: true }).expect(200);
    await createFlag(t, org.key, { key: 'new-mode', type: 'json', value: { map: 'dust' } });
    const changed = nextChange(client);
    scheduler.runNext();

    expect(await changed).toEqual(['motd', 'new-mode', 'retired']);
    expect(recorder.polls[1].status).toBe(200);
    expect(client.getString('motd', '')).toBe('Double XP!');
    expect(client.getBoolean('retired', false)).toBe(false);
    expect(client.getJson('new-mode', null)).toEqual({ map: 'dust' });
    expect(client.all()).toEqual({ untouched: 1, motd: 'Double XP!', 'new-mode': { map: 'dust' } });
    expect(scheduler.pending()).toEqual([20_000]);
  });

  it('waits out Retry-After on a 429: no request before it has passed', async () => {
    const recorder = new RecordingFetch();
    const { client, scheduler } = connect({ random: () => 0 }, recorder);
    await client.ready();

    recorder.intercept(() => errorResponse(429, { 'Retry-After': '120' }));
    const error = nextError(client);
    expect(await tick(scheduler)).toBe(120_000);
    expect(await error).toMatchObject({ kind: 'rate-limited', status: 429, retryAfterSeconds: 120 });
    recorder.up();
    const sent = recorder.requests.length;

    scheduler.advance(119_999);
    expect(recorder.requests).toHaveLength(sent);
    const next = scheduler.nextTimer();
    scheduler.advance(1);
    expect(recorder.requests).toHaveLength(sent + 1);
    expect(await next).toEqual({ delay: 18_000 }); // back to the interval (−10 % at random 0), not to a backoff
  });

  it('reads Retry-After given as an HTTP date', async () => {
    const recorder = new RecordingFetch();
    const { client, scheduler } = connect({ random: () => 0 }, recorder);
    await client.ready();

    recorder.intercept(() => errorResponse(429, { 'Retry-After': new Date(scheduler.now() + 90_000).toUTCString() }));
    expect(await tick(scheduler)).toBe(90_000);
  });

  it('backs off exponentially with jitter on network errors and 5xx, from 1 s up to 5 min, and polls normally once back', async () => {
    await createFlag(t, org.key, { key: 'xp-multiplier', type: 'number', value: 2 });
    const { client, scheduler, recorder } = connect();
    const errors = collectErrors(client);
    await client.ready();

    recorder.down();
    const delays: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) delays.push(await tick(scheduler));
    recorder.intercept(() => errorResponse(503));
    for (let attempt = 0; attempt < 5; attempt++) delays.push(await tick(scheduler));

    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
    expect(errors.map((error) => [error.kind, error.status])).toEqual([...Array(6).fill(['network', undefined]), ...Array(5).fill(['server', 503])]);
    expect(errors[0].message).toMatch(/ECONNREFUSED/);

    recorder.up();
    expect(await tick(scheduler)).toBe(20_000);
    recorder.down();
    expect(await tick(scheduler)).toBe(1_000); // a success starts the backoff over
  });

  it('keeps the backoff within 1 s … 5 min whatever the jitter', async () => {
    const low = connect({ random: () => 0 });
    const high = connect({ random: () => 0.999 });
    await Promise.all([low.client.ready(), high.client.ready()]);
    low.recorder.down();
    high.recorder.down();

    const lowDelays: number[] = [];
    const highDelays: number[] = [];
    for (let attempt = 0; attempt < 11; attempt++) {
      lowDelays.push(await tick(low.scheduler));
      highDelays.push(await tick(high.scheduler));
    }
    expect(lowDelays).toEqual([1_000, 1_600, 3_200, 6_400, 12_800, 25_600, 51_200, 102_400, 204_800, 240_000, 240_000]);
    expect(highDelays.map(Math.round)).toEqual([1_200, 2_399, 4_798, 9_597, 19_194, 38_387, 76_774, 153_549, 300_000, 300_000, 300_000]);
  });

  it('keeps serving the last good values through an outage, whatever form it takes', async () => {
    await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello', runtime: 'shared' });
    const { client, scheduler, recorder } = connect({}, undefined);
    const changes = jest.fn();
    client.on('change', changes);
    const errors = collectErrors(client);
    await client.ready();
    const before = { all: client.all(), clientSafe: client.clientSafe() };

    const outages: Array<[string, () => void]> = [
      ['a refused connection', () => recorder.down()],
      ['a 500', () => recorder.intercept(() => errorResponse(500))],
      ['a proxy page', () => recorder.intercept(() => new Response('<html>Bad gateway</html>', { status: 502 }))],
      ['a 200 that is not JSON', () => recorder.intercept(() => new Response('<html>captive portal</html>', { status: 200 }))],
      ['an unexpected 404', () => recorder.intercept(() => errorResponse(404))],
    ];
    for (const [, start] of outages) {
      start();
      await tick(scheduler);
      expect({ all: client.all(), clientSafe: client.clientSafe() }).toEqual(before);
      expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    }
    expect(errors.map((error) => error.kind)).toEqual(['network', 'server', 'server', 'invalid-payload', 'http']);
    expect(changes).not.toHaveBeenCalled();
  });

  it('fails a request that hangs as a timeout, and retries it', async () => {
    const { client, scheduler, recorder } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, requestTimeoutMs: 50 });
    await client.ready();

    recorder.intercept(() => new Promise<Response>(() => undefined));
    const error = nextError(client);
    expect(await tick(scheduler)).toBe(1_000);
    expect(await error).toMatchObject({ kind: 'timeout' });
  });

  it('stops for good on a 401: no request after it', async () => {
    const key = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    const { client, scheduler, recorder } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: key.key });
    await client.ready();

    await admin(t).delete(`/organizations/${org.id}/api-keys/${key.id}`).expect(204);
    const error = nextError(client);
    scheduler.runNext();
    expect(await error).toMatchObject({ kind: 'unauthorized', status: 401 });
    expect((await error).message).toMatch(/answered 401/);

    expect(scheduler.pending()).toEqual([]);
    expect(recorder.requests.map((sent) => sent.status)).toEqual([200, 401]);
    // The last good values stay readable.
    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
  });

  it('stops on a 403 from a key without FLAGS_READ, and ready() rejects with it', async () => {
    const key = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
    const { client, scheduler, recorder } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: key.key, stream: true });
    const errors = collectErrors(client);

    const rejection = await client.ready().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBeInstanceOf(FlagstoreError);
    expect(rejection).toMatchObject({ kind: 'forbidden', status: 403 });
    expect(errors).toEqual([rejection]);
    expect(scheduler.pending()).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.requests).toEqual([expect.objectContaining({ path: '/v1/flags/config', status: 403 })]); // no stream either
  });
});

describe('FlagstoreClient close()', () => {
  const { t, org } = useTestApp({ leanConfigPoll: true });
  const newClient = useClients();

  it('aborts the first request, rejects ready() as closed, and leaves nothing scheduled', async () => {
    const recorder = new RecordingFetch();
    let answer!: (response: Response) => void;
    recorder.intercept(() => new Promise<Response>((resolve) => (answer = resolve)));
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, stream: true }, recorder);
    const errors = collectErrors(client);

    await client.close();
    await expect(client.ready()).rejects.toMatchObject({ kind: 'closed' });
    answer(Response.json({ etag: 'late', generatedAt: '', pollIntervalSeconds: 20, flags: [] }));
    await new Promise((resolve) => setImmediate(resolve));

    expect(recorder.requests).toHaveLength(1);
    expect(scheduler.pending()).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('FlagstoreClient against the service rate limit', () => {
  const { t, org } = useTestApp({ leanConfigPoll: true, env: { CONFIG_RATE_LIMIT_PER_MINUTE: '2' } });
  const newClient = useClients();

  it("waits out the service's own Retry-After before sending anything again", async () => {
    const { client, scheduler, recorder } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, random: () => 0 });
    await client.ready();
    await tick(scheduler); // the second request of the minute: 304

    const error = nextError(client);
    const delay = await tick(scheduler);
    const { retryAfterSeconds } = await error;
    expect(recorder.requests.map((sent) => sent.status)).toEqual([200, 304, 429]);
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(delay).toBe(retryAfterSeconds! * 1000);

    scheduler.advance(delay - 1);
    expect(recorder.requests).toHaveLength(3);
    scheduler.advance(1);
    expect(recorder.requests).toHaveLength(4);
  });
});
