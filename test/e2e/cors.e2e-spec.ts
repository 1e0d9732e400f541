import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { bytes, pathOf, post, put, signedUrl, uploadFile } from '../factories/storage.factory';
import { createTestApp, TestApp } from '../support/test-app';

const GAME = 'https://game.example.com';
const TOOLS = 'http://localhost:8080';
const STRANGER = 'https://evil.example.net';

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
  'access-control-allow-credentials',
];

function expectNoCors(response: request.Response): void {
  for (const header of CORS_HEADERS) expect(response.headers).not.toHaveProperty(header);
}

function expectApiCors(response: request.Response, origin: string): void {
  expect(response.headers['access-control-allow-origin']).toBe(origin);
  expect(response.headers['access-control-expose-headers']).toBe('ETag,Retry-After,X-Request-Id');
  // Never credentials: keys travel in headers, and a page of another origin must never ride on a person's session cookie.
  expect(response.headers).not.toHaveProperty('access-control-allow-credentials');
}

function preflight(t: TestApp, path: string, origin: string, method: string, headers = 'authorization') {
  return request(t.http)
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', headers);
}

describe('CORS', () => {
  describe('with CORS_ORIGINS listing origins', () => {
    let t: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      t = await createTestApp({ CORS_ORIGINS: `${GAME},${TOOLS}`, CONFIG_RATE_LIMIT_PER_MINUTE: '3' });
    });
    afterAll(() => t.close());
    beforeEach(async () => {
      org = await createOrganization(t);
    });

    it('answers a listed origin on the API, with the headers a browser client reads exposed', async () => {
      const response = await request(t.http).get('/v1/flags').set('Origin', GAME).set(bearer(org.key)).expect(200);
      expectApiCors(response, GAME);
      expect(response.headers.vary).toMatch(/\bOrigin\b/);
      const other = await request(t.http).get('/v1/flags/quota').set('Origin', TOOLS).set(bearer(org.key)).expect(200);
      expectApiCors(other, TOOLS);
    });

    it('leaves an origin it does not list without an Allow-Origin, so the browser refuses the answer', async () => {
      const response = await request(t.http).get('/v1/flags').set('Origin', STRANGER).set(bearer(org.key)).expect(200);
      expect(response.headers).not.toHaveProperty('access-control-allow-origin');
      expect(response.headers.vary).toMatch(/\bOrigin\b/);
    });

    it('answers preflights for the API with 204, the methods, the request headers it accepts and a max age', async () => {
      const response = await preflight(t, '/v1/flags/some-id', GAME, 'PATCH', 'authorization,content-type').expect(204);
      expect(response.headers['access-control-allow-origin']).toBe(GAME);
      expect(response.headers['access-control-allow-methods']).toBe('GET,HEAD,POST,PATCH,DELETE');
      expect(response.headers['access-control-allow-headers']).toBe('Authorization,Content-Type,If-Match,If-None-Match,X-API-Key');
      expect(response.headers['access-control-max-age']).toBe('600');
      expect(response.text).toBe('');
    });

    it('sends the CORS headers on the config poll, its 304, and its refusals', async () => {
      await createFlag(t, org.key, { key: 'speed', type: 'number', value: 3 });
      const first = await request(t.http).get('/v1/flags/config').set('Origin', GAME).set(bearer(org.key)).expect(200);
      expectApiCors(first, GAME);
      const again = await request(t.http)
        .get('/v1/flags/config')
        .set('Origin', GAME)
        .set(bearer(org.key))
        .set('If-None-Match', first.headers.etag)
        .expect(304);
      expectApiCors(again, GAME);
      const limited = await request(t.http).get('/v1/flags/config').set('Origin', GAME).set(bearer(org.key));
      const refused = limited.status === 429 ? limited : await request(t.http).get('/v1/flags/config').set('Origin', GAME).set(bearer(org.key));
      expect(refused.status).toBe(429);
      expectApiCors(refused, GAME);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      const unauthorised = await request(t.http).get('/v1/flags/config').set('Origin', GAME).set(bearer('fsk_not_a_key')).expect(401);
      expectApiCors(unauthorised, GAME);
    });

    it('sends the CORS headers on errors raised before routing and on unknown routes', async () => {
      const malformed = await request(t.http)
        .post('/v1/flags')
        .set('Origin', GAME)
        .set(bearer(org.key))
        .set('Content-Type', 'application/json')
        .send('{"key":')
        .expect(400);
      expectApiCors(malformed, GAME);
      const unknown = await request(t.http).get('/v1/no-such-route').set('Origin', GAME).set(bearer(org.key)).expect(404);
      expectApiCors(unknown, GAME);
    });

    it('never answers the admin API cross-origin, whatever the case of its path', async () => {
      const created = await admin(t).post('/organizations').set('Origin', GAME).send({ name: 'Web Studio' }).expect(201);
      expectNoCors(created);
      const shouted = await request(t.http).post('/V1/ADMIN/organizations').set('Origin', GAME).send({ name: 'x' }).expect(401);
      expectNoCors(shouted);
      const refused = await preflight(t, '/v1/admin/organizations', GAME, 'POST');
      expectNoCors(refused);
      expect(refused.status).toBe(404);
    });

    it('never sends CORS headers on health and the OpenAPI routes', async () => {
      expectNoCors(await request(t.http).get('/health').set('Origin', GAME).expect(200));
      expectNoCors(await request(t.http).get('/docs-json').set('Origin', GAME).expect(200));
    });
  });

  describe('with CORS_ORIGINS=*', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ CORS_ORIGINS: '*' });
    });
    afterAll(() => t.close());

    it('answers every origin on the API with *', async () => {
      const org = await createOrganization(t);
      const response = await request(t.http).get('/v1/flags').set('Origin', STRANGER).set(bearer(org.key)).expect(200);
      expectApiCors(response, '*');
      const poll = await request(t.http).get('/v1/flags/config').set('Origin', STRANGER).set(bearer(org.key)).expect(200);
      expectApiCors(poll, '*');
    });
  });

  describe('without CORS_ORIGINS', () => {
    let t: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());
    beforeEach(async () => {
      org = await createOrganization(t);
    });

    it('sends no CORS header at all on the API, the poll or its preflights', async () => {
      expectNoCors(await request(t.http).get('/v1/flags').set('Origin', GAME).set(bearer(org.key)).expect(200));
      expectNoCors(await request(t.http).get('/v1/flags/config').set('Origin', GAME).set(bearer(org.key)).expect(200));
      expectNoCors(await preflight(t, '/v1/flags', GAME, 'POST'));
    });

    it('answers every origin on the upload host, successes and errors alike', async () => {
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: 4 });
      const stored = await put(t, signed.url, bytes(4), 'image/png').set('Origin', STRANGER).expect(200);
      expect(stored.headers['access-control-allow-origin']).toBe('*');
      const replayed = await put(t, signed.url, bytes(4), 'image/png').set('Origin', STRANGER);
      expect(replayed.status).toBeGreaterThanOrEqual(400);
      expect(replayed.headers['access-control-allow-origin']).toBe('*');
      const tampered = await put(t, signed.url.replace(/signature=[^&]+/, 'signature=forged'), bytes(4), 'image/png').expect(403);
      expect(tampered.headers['access-control-allow-origin']).toBe('*');

      const form = await signedUrl(t, org);
      const posted = await post(t, form.url, bytes(8), { contentType: 'image/png', filename: 'a.png' }).set('Origin', STRANGER).expect(201);
      expect(posted.headers['access-control-allow-origin']).toBe('*');
    });

    it('answers upload preflights with 204, PUT and POST, Content-Type and a max age', async () => {
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: 4 });
      const response = await preflight(t, pathOf(signed.url), STRANGER, 'PUT', 'content-type').expect(204);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-methods']).toBe('PUT,POST');
      expect(response.headers['access-control-allow-headers']).toBe('Content-Type');
      expect(response.headers['access-control-max-age']).toBe('600');
    });

    it('answers every origin on the CDN, exposing the headers a ranged or revalidating reader needs', async () => {
      const item = await uploadFile(t, org, bytes(16));
      const served = await request(t.http).get(pathOf(item.mediaUrl)).set('Origin', STRANGER).expect(200);
      expect(served.headers['access-control-allow-origin']).toBe('*');
      expect(served.headers['access-control-expose-headers']).toBe('ETag,Content-Length,Content-Range,Accept-Ranges');
      const ranged = await request(t.http).get(pathOf(item.mediaUrl)).set('Origin', STRANGER).set('Range', 'bytes=0-3').expect(206);
      expect(ranged.headers['access-control-allow-origin']).toBe('*');
      const missing = await request(t.http).get(`/c/${org.id}/00000000-0000-4000-8000-000000000000`).set('Origin', STRANGER).expect(404);
      expect(missing.headers['access-control-allow-origin']).toBe('*');

      const response = await preflight(t, pathOf(item.mediaUrl), STRANGER, 'GET', 'range').expect(204);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-methods']).toBe('GET,HEAD');
      expect(response.headers['access-control-allow-headers']).toBe('Range,If-None-Match,If-Range');
      expect(response.headers['access-control-max-age']).toBe('600');
    });

    it('keeps the API closed to browsers for a key that could read it', async () => {
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      expectNoCors(await request(t.http).get('/v1/flags').set('Origin', GAME).set(bearer(reader.key)).expect(200));
    });
  });
});
