import { AsyncLocalStorage } from 'node:async_hooks';
import request from 'supertest';
import { api, createFlag } from '../factories/flags.factory';
import { bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { pathOf, put, signedUrl } from '../factories/storage.factory';
import { LogCapture } from '../support/log-capture';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('logs', () => {
  const capture = new LogCapture();
  let t: TestApp;
  let org: TestOrganization;
  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info', CONFIG_RATE_LIMIT_PER_MINUTE: '3' }, { logDestination: capture });
    org = await createOrganization(t);
  });
  afterAll(() => t.close());

  it('writes one JSON line per request: method, route pattern, status, duration, request id, organization and key', async () => {
    const flag = await createFlag(t, org.key, { key: 'logged' });
    capture.text = '';
    await api(t, org.key).patch(`/flags/${flag.id}`).set('X-Request-Id', 'trace-me-1').send({ name: 'Renamed' }).expect(200);
    await settle();
    expect(capture.requests()).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        requestId: 'trace-me-1',
        method: 'PATCH',
        route: '/v1/flags/:flagId',
        status: 200,
        durationMs: expect.any(Number),
        organizationId: org.id,
        keyId: org.keyId,
      }),
    ]);
    // Every line the app writes is JSON, with an ISO time.
    expect(capture.lines.every((line) => typeof line.time === 'string')).toBe(true);
  });

  it('logs refusals raised before routing, and unknown routes, without their URL', async () => {
    capture.text = '';
    await api(t, org.key).post('/flags').set('Content-Type', 'application/json').send('{"key":').expect(400);
    await request(t.http).get('/v1/no-such/route?token=abc').expect(404);
    await settle();
    expect(capture.requests().map(({ method, route, status }) => ({ method, route, status }))).toEqual([
      { method: 'POST', route: '(unmatched)', status: 400 },
      { method: 'GET', route: '(unmatched)', status: 404 },
    ]);
  });

  it("never logs a key, a token, an Authorization header, a signed URL's query or a body", async () => {
    capture.text = '';
    const secretValue = 'do-not-log-this-value';
    await api(t, org.key).post('/flags').send({ key: 'secret-flag', name: secretValue, type: 'string', value: secretValue }).expect(201);
    await request(t.http).post('/v1/admin/organizations').set(bearer(TEST_ADMIN_TOKEN)).send({ name: secretValue }).expect(201);
    await request(t.http)
      .get('/v1/flags')
      .set(bearer('fsk_' + 'x'.repeat(43)))
      .expect(401);
    const signed = await signedUrl(t, org, { contentType: 'text/plain', size: secretValue.length });
    await put(t, signed.url, Buffer.from(secretValue), 'text/plain').expect(200);
    await request(t.http).get(pathOf(signed.mediaUrl!)).expect(200);
    await settle();

    const signature = new URL(signed.url).searchParams.get('signature')!;
    for (const forbidden of [org.key, TEST_ADMIN_TOKEN, 'fsk_', 'Bearer', 'authorization', signature, 'signature=', secretValue]) {
      expect(capture.text).not.toContain(forbidden);
    }
    expect(capture.requests().map(({ route }) => route)).toEqual(
      expect.arrayContaining([
        '/v1/flags',
        '/v1/admin/organizations',
        '/v1/storage/signed-url',
        '/upload/:organizationId/:mediaId',
        '/c/:organizationId/:mediaId',
      ]),
    );
  });

  // On Node 20, each AsyncLocalStorage that has run once is propagated into every async resource and promise the
  // process creates from then on, a poll's included. Transactions are passed by hand, and nestjs-pino's request
  // binding is not mounted, so none runs.
  it('runs requests, writes included, in no AsyncLocalStorage, and logs them all the same', async () => {
    const entered = [jest.spyOn(AsyncLocalStorage.prototype, 'run'), jest.spyOn(AsyncLocalStorage.prototype, 'enterWith')];
    try {
      const flag = await createFlag(t, org.key, { key: 'one-store' });
      capture.text = '';
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed again' }).expect(200);
      await request(t.http).get('/health/live').expect(200);
      await settle();
      for (const spy of entered) expect(spy).not.toHaveBeenCalled();
      expect(capture.requests().map(({ route, status }) => ({ route, status }))).toEqual([
        { route: '/v1/flags/:flagId', status: 200 },
        { route: '/health/live', status: 200 },
      ]);
    } finally {
      for (const spy of entered) spy.mockRestore();
    }
  });

  it('logs no config poll answered 200, 304 or 429, and logs the others', async () => {
    const other = await createOrganization(t);
    capture.text = '';
    const first = await request(t.http).get('/v1/flags/config').set(bearer(other.key)).expect(200);
    await request(t.http).get('/v1/flags/config').set(bearer(other.key)).set('If-None-Match', first.headers.etag).expect(304);
    await request(t.http).get('/v1/flags/config').set(bearer(other.key)).expect(200);
    await request(t.http).get('/v1/flags/config').set(bearer(other.key)).expect(429);
    await request(t.http)
      .get('/v1/flags/config')
      .set(bearer('fsk_' + 'y'.repeat(43)))
      .expect(401);
    await settle();
    expect(capture.requests()).toEqual([
      expect.objectContaining({ method: 'GET', route: '/v1/flags/config', status: 401, durationMs: expect.any(Number) }),
    ]);
  });
});
