import { OFREPProvider } from '@openfeature/ofrep-provider';
import { ErrorCode, OpenFeature } from '@openfeature/server-sdk';
import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { bearer, createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { createTestApp, TestApp } from '../support/test-app';

const BULK = '/ofrep/v1/evaluate/flags';
const CONTEXT = { context: { targetingKey: 'server-eu-1' } };

/** OFREP (README, "OpenFeature (OFREP)"), over HTTP and through the real OpenFeature Node SDK and provider. */
describe('OpenFeature Remote Evaluation Protocol', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const ofrep = (path: string, key = org.key) => request(t.http).post(path).set(bearer(key));

  /** One flag of each type and runtime, an archived one, and a null JSON value. */
  async function flags(): Promise<void> {
    await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true });
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Welcome back' });
    await createFlag(t, org.key, { key: 'xp-rate', type: 'number', value: 1.5 });
    await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { common: 70, rare: [25, 5] }, runtime: 'server' });
    await createFlag(t, org.key, { key: 'tiers', type: 'json', value: ['bronze', 'silver'] });
    await createFlag(t, org.key, { key: 'nothing', type: 'json', value: null });
    const archived = await createFlag(t, org.key, { key: 'old-event', type: 'boolean', value: true });
    await api(t, org.key).patch(`/flags/${archived.id}`).send({ archived: true }).expect(200);
  }

  beforeEach(async () => {
    org = await createOrganization(t);
    await subscribe(t, org.id); // seven flags: past the free allowance of five
  });

  describe('bulk evaluation', () => {
    it('evaluates every flag of the config payload, with the config ETag, and names the change stream', async () => {
      await flags();
      const config = await api(t, org.key).get('/flags/config').expect(200);
      const bulk = await ofrep(BULK).send(CONTEXT).expect(200);
      expect(bulk.headers.etag).toBe(config.headers.etag);
      expect(bulk.headers['cache-control']).toBe('no-cache, must-revalidate');
      expect(bulk.body.flags).toEqual(
        config.body.flags.map((flag: { key: string; type: string; value: unknown; runtime: string }) => ({
          key: flag.key,
          value: flag.value,
          reason: 'STATIC',
          variant: 'default',
          metadata: { type: flag.type, runtime: flag.runtime },
        })),
      );
      expect(bulk.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['double-xp', 'loot-table', 'motd', 'nothing', 'tiers', 'xp-rate']);
      expect(bulk.body.eventStreams).toEqual([
        {
          type: 'sse',
          url: expect.stringMatching(/^http:\/\/localhost:\d+\/v1\/flags\/config\/stream\?token=[\w-]+\.[\w-]+$/),
          inactivityDelaySec: 120,
        },
      ]);
      // The stream URL's token opens this key's stream.
      const url = new URL(bulk.body.eventStreams[0].url);
      const stream = await openStream(`${url.pathname}${url.search}`);
      expect(stream.status).toBe(200);
      stream.close();
    });

    it('answers 304 to If-None-Match with the ETag of the config poll, in any of its forms', async () => {
      await flags();
      const config = await api(t, org.key).get('/flags/config').expect(200);
      const tag = config.headers.etag as string;
      for (const ifNoneMatch of [tag, tag.slice(2), tag.slice(3, -1), `"other", ${tag}`, '*']) {
        const answer = await ofrep(BULK).set('If-None-Match', ifNoneMatch).send(CONTEXT).expect(304);
        expect(answer.text).toBe('');
        expect(answer.headers.etag).toBe(tag);
        expect(answer.headers['cache-control']).toBe('no-cache, must-revalidate');
      }
      const flag = await createFlag(t, org.key, { key: 'new-one' });
      const changed = await ofrep(BULK).set('If-None-Match', tag).send(CONTEXT).expect(200);
      expect(changed.headers.etag).not.toBe(tag);
      expect(changed.body.flags.map((entry: { key: string }) => entry.key)).toContain(flag.key);
    });

    it('takes the key as X-API-Key too, and ignores the stream metadata query', async () => {
      await flags();
      const answer = await request(t.http)
        .post(`${BULK}?flagConfigEtag=abc&flagConfigLastModified=1771622898`)
        .set('X-API-Key', org.key)
        .send(CONTEXT)
        .expect(200);
      expect(answer.body.flags).toHaveLength(6);
    });
  });

  describe('single evaluation', () => {
    it.each([
      ['double-xp', true, 'boolean', 'shared'],
      ['motd', 'Welcome back', 'string', 'shared'],
      ['xp-rate', 1.5, 'number', 'shared'],
      ['loot-table', { common: 70, rare: [25, 5] }, 'json', 'server'],
      ['nothing', null, 'json', 'shared'],
    ])('evaluates %s', async (key, value, type, runtime) => {
      await flags();
      const answer = await ofrep(`${BULK}/${key}`).send(CONTEXT).expect(200);
      expect(answer.body).toEqual({ key, value, reason: 'STATIC', variant: 'default', metadata: { type, runtime } });
    });

    it.each([
      ['an unknown key', 'no-such-flag'],
      ['an archived key', 'old-event'],
    ])('answers 404 FLAG_NOT_FOUND for %s', async (_case, key) => {
      await flags();
      const answer = await ofrep(`${BULK}/${key}`).send(CONTEXT).expect(404);
      expect(answer.body).toEqual({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `Flag "${key}" was not found (or is archived)` });
    });
  });

  describe('refusals, in OFREP’s error shape', () => {
    it.each([
      ['no body', undefined],
      ['no context', {}],
      ['a context that is a string', { context: 'eu' }],
      ['a context that is an array', { context: ['eu'] }],
      ['a context that is null', { context: null }],
    ])('answers 400 INVALID_CONTEXT to %s, on both routes', async (_case, body) => {
      for (const path of [BULK, `${BULK}/motd`]) {
        const call = ofrep(path);
        const answer = await (body === undefined ? call : call.send(body)).expect(400);
        expect(answer.body).toEqual({ errorCode: 'INVALID_CONTEXT', errorDetails: expect.stringMatching(/^context must be a JSON object/) });
      }
    });

    it('answers 400 PARSE_ERROR to a body that is not JSON', async () => {
      const answer = await ofrep(BULK).set('Content-Type', 'application/json').send('{"context": {').expect(400);
      expect(answer.body).toEqual({ errorCode: 'PARSE_ERROR', errorDetails: expect.any(String) });
    });

    it('answers 415 to a body that is not JSON and 413 to one past 256 KB', async () => {
      const text = await ofrep(BULK).set('Content-Type', 'text/plain').send('context').expect(415);
      expect(text.body).toEqual({ errorCode: 'UNSUPPORTED_MEDIA_TYPE', errorDetails: expect.any(String) });
      const large = await ofrep(`${BULK}/motd`)
        .send({ context: { pad: 'x'.repeat(300 * 1024) } })
        .expect(413);
      expect(large.body).toEqual({ errorCode: 'PAYLOAD_TOO_LARGE', errorDetails: expect.any(String) });
    });

    it('answers 401 without a key or with a bad one, and 403 without FLAGS_READ', async () => {
      expect((await request(t.http).post(BULK).send(CONTEXT).expect(401)).body).toEqual({
        errorCode: 'UNAUTHORIZED',
        errorDetails: expect.any(String),
      });
      expect((await request(t.http).post(BULK).set('X-API-Key', 'fsk_nope').send(CONTEXT).expect(401)).body.errorCode).toBe('UNAUTHORIZED');
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      expect((await ofrep(`${BULK}/motd`, writer.key).send(CONTEXT).expect(403)).body.errorCode).toBe('FORBIDDEN');
    });
  });

  it('counts both routes against the config poll’s budget (429 with Retry-After)', async () => {
    const limited = await createTestApp({ CONFIG_RATE_LIMIT_PER_MINUTE: '4' });
    try {
      const owner = await createOrganization(limited);
      await createFlag(limited, owner.key, { key: 'motd', type: 'string', value: 'hi' });
      await request(limited.http).get('/v1/flags/config').set(bearer(owner.key)).expect(200);
      await request(limited.http).post(BULK).set(bearer(owner.key)).send(CONTEXT).expect(200);
      await request(limited.http).post(`${BULK}/motd`).set(bearer(owner.key)).send(CONTEXT).expect(200);
      await request(limited.http).get('/v1/flags/config').set(bearer(owner.key)).expect(200);
      const refused = await request(limited.http).post(`${BULK}/motd`).set(bearer(owner.key)).send(CONTEXT).expect(429);
      expect(refused.body).toEqual({ errorCode: 'RATE_LIMITED', errorDetails: expect.stringMatching(/at most 4 config requests per minute/) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      await request(limited.http).get('/v1/flags/config').set(bearer(owner.key)).expect(429);
    } finally {
      await limited.close();
    }
  });

  it('leaves eventStreams out when STREAMS_ENABLED=false, and the stream answers 404', async () => {
    const off = await createTestApp({ STREAMS_ENABLED: 'false' });
    try {
      const owner = await createOrganization(off);
      const bulk = await request(off.http).post(BULK).set(bearer(owner.key)).send(CONTEXT).expect(200);
      expect(bulk.body).toEqual({ flags: [] });
      await request(off.http).get('/v1/flags/config/stream').set(bearer(owner.key)).expect(404);
    } finally {
      await off.close();
    }
  });

  describe('through the OpenFeature Node SDK and its OFREP provider', () => {
    async function client(key: string, domain: string) {
      await OpenFeature.setProviderAndWait(
        domain,
        new OFREPProvider({ baseUrl: t.config.urls.publicUrl, headers: [['Authorization', `Bearer ${key}`]] }),
      );
      return OpenFeature.getClient(domain);
    }
    afterAll(() => OpenFeature.close());

    it('reads every type, and falls back for unknown and archived keys and the wrong type', async () => {
      await flags();
      const flagsClient = await client(org.key, `reader-${org.id}`);
      const context = { targetingKey: 'server-eu-1' };
      expect(await flagsClient.getBooleanDetails('double-xp', false, context)).toMatchObject({ value: true, reason: 'STATIC', variant: 'default' });
      expect(await flagsClient.getStringValue('motd', 'none', context)).toBe('Welcome back');
      expect(await flagsClient.getNumberValue('xp-rate', 1, context)).toBe(1.5);
      expect(await flagsClient.getObjectValue('loot-table', {}, context)).toEqual({ common: 70, rare: [25, 5] });
      expect(await flagsClient.getObjectValue('tiers', [], context)).toEqual(['bronze', 'silver']);
      const details = await flagsClient.getBooleanDetails('double-xp', false, context);
      expect(details.flagMetadata).toEqual({ type: 'boolean', runtime: 'shared' });

      for (const key of ['no-such-flag', 'old-event']) {
        expect(await flagsClient.getBooleanDetails(key, false, context)).toMatchObject({
          value: false,
          reason: 'ERROR',
          errorCode: ErrorCode.FLAG_NOT_FOUND,
        });
      }
      expect(await flagsClient.getNumberDetails('motd', 7, context)).toMatchObject({ value: 7, reason: 'ERROR', errorCode: ErrorCode.TYPE_MISMATCH });
    });

    it('falls back to the defaults with a bad key', async () => {
      await flags();
      const rejected = await client('fsk_this-is-not-a-key', `bad-${org.id}`);
      const details = await rejected.getStringDetails('motd', 'offline', { targetingKey: 'x' });
      expect(details).toMatchObject({ value: 'offline', reason: 'ERROR' });
      expect(details.errorCode).toBeDefined();
    });
  });

  /** Opens the stream at `path` and reads its status; close() ends it. */
  function openStream(path: string): Promise<{ status: number; close: () => void }> {
    const controller = new AbortController();
    return fetch(`${t.config.urls.publicUrl}${path}`, { signal: controller.signal }).then((response) => ({
      status: response.status,
      close: () => controller.abort(),
    }));
  }
});
