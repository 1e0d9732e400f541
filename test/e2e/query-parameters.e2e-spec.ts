import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { memberSignedIn } from '../factories/people.factory';
import { uploadFile } from '../factories/storage.factory';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

const SOME_ID = '00000000-0000-4000-8000-000000000000';
const CONFIG_POLL = '/v1/flags/config';
/** The single sign-on callback: the provider adds parameters of its own (iss, session_state). */
const SSO_CALLBACK = '/v1/auth/sso/callback';
/** The operations that ignore unknown query parameters, and document it. */
const IGNORING = new Set([`get ${CONFIG_POLL}`, `get ${SSO_CALLBACK}`]);

type Operation = { 'x-unknown-query-parameters'?: string; parameters?: { in: string; name: string }[]; responses: Record<string, unknown> };

/**
 * Every route under base_url and the admin API refuses a query parameter it does not take, with a 400 naming it
 * (decisions.md, "Safe defaults and the first hour"): `DELETE /v1/storage/purge?dryRun=true` purged every file,
 * since dryRun is a body field and the query was ignored. The config poll is the exception: game clients add
 * cache-busting parameters.
 */
describe('unknown query parameters', () => {
  let t: TestApp;
  let org: TestOrganization;
  let paths: Record<string, Record<string, Operation>>;

  beforeAll(async () => {
    t = await createTestApp();
    paths = (await request(t.http).get('/docs-json').expect(200)).body.paths;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    org = await createOrganization(t);
  });

  const files = async () => (await t.db.query('SELECT count(*)::int AS n FROM storage_items WHERE organization_id = $1', [org.id])).rows[0].n;

  it('refuses DELETE /v1/storage/purge?dryRun=true with a 400 naming dryRun, and purges nothing', async () => {
    await uploadFile(t, org, Buffer.from('abc'));
    await uploadFile(t, org, Buffer.from('defg'));
    const response = await request(t.http).delete('/v1/storage/purge?dryRun=true').set(bearer(org.key));
    expectStorageError(response, 400, 'VALIDATION_ERROR', /^Unknown query parameter "dryRun": this operation takes no query parameters/);
    expect(await files()).toBe(2);
    // As a body field it is what it says.
    const dry = await request(t.http).delete('/v1/storage/purge').set(bearer(org.key)).send({ dryRun: true }).expect(200);
    expect(dry.body.purgedCount).toBe(2);
    expect(await files()).toBe(2);
  });

  it('answers every operation under /v1 but the config poll and the SSO callback with that 400, in the shape of its surface', async () => {
    const operations = Object.entries(paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => [method, path] as const))
      .filter(([method, path]) => !IGNORING.has(`${method} ${path}`));
    // The flag, storage, people and admin APIs, whatever routes they have now (at least those of today).
    expect(operations.length).toBeGreaterThanOrEqual(45);
    // Routes of people and of the signed-in user take a session (a key is refused before the query is looked at).
    const member = await memberSignedIn(t, org.id, 'admin');
    const sessionOnly = (path: string) =>
      path.startsWith('/v1/organization') || /^\/v1\/auth\/(session|logout|password|me|verify-email(\/\{token\})?)$/.test(path);
    for (const [method, path] of operations) {
      const url = `${path.replace(/\{[^}]+\}/g, SOME_ID)}?bogus=1&also=2`;
      const key = path.startsWith('/v1/admin') ? TEST_ADMIN_TOKEN : org.key;
      const credentials = sessionOnly(path)
        ? { Cookie: member.cookie, 'X-Organization-Id': org.id, 'X-CSRF-Token': member.csrfToken }
        : { Authorization: `Bearer ${key}` };
      const response = await request(t.http)[method as 'get'](url).set(credentials);
      const message = /^Unknown query parameters "bogus", "also": this operation takes (no query parameters|only .+)$/;
      const shaped = path.startsWith('/v1/storage') ? expectStorageError : expectApiError;
      try {
        shaped(response, 400, 'VALIDATION_ERROR', message);
      } catch (error) {
        throw new Error(`${method.toUpperCase()} ${url}: ${(error as Error).message}`, { cause: error });
      }
      expect(paths[path][method].responses['400']).toBeDefined();
    }
  });

  it('names what the operation does take', async () => {
    expectApiError(
      await api(t, org.key).get('/flags?sort=key'),
      400,
      'VALIDATION_ERROR',
      /^Unknown query parameter "sort": this operation takes only search, includeArchived, page, limit$/,
    );
    expectApiError(
      await api(t, org.key).get('/flags/config/stream?tokne=x'),
      400,
      'VALIDATION_ERROR',
      /^Unknown query parameter "tokne": this operation takes only organizationId, token$/,
    );
    // The parameters it takes are still taken.
    await createFlag(t, org.key, { key: 'one' });
    expect((await api(t, org.key).get('/flags?limit=1&page=1&search=one&includeArchived=false').expect(200)).body.total).toBe(1);
  });

  it('changes nothing when it refuses a write', async () => {
    const flag = await createFlag(t, org.key, { key: 'kept' });
    expectApiError(await api(t, org.key).delete(`/flags/${flag.id}?force=true`), 400, 'VALIDATION_ERROR', /"force"/);
    expectApiError(await api(t, org.key).patch(`/flags/${flag.id}?archived=true`).send({ name: 'renamed' }), 400, 'VALIDATION_ERROR', /"archived"/);
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body).toMatchObject({ name: 'Flag kept', archived: false });
    const file = await uploadFile(t, org, Buffer.from('abc'));
    expectStorageError(await request(t.http).delete(`/v1/storage/${file.id}?now=1`).set(bearer(org.key)), 400, 'VALIDATION_ERROR', /"now"/);
    expect(await files()).toBe(1);
    const other = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    expectApiError(await admin(t).delete(`/organizations/${org.id}/api-keys/${other.id}?confirm=yes`), 400, 'VALIDATION_ERROR', /"confirm"/);
    const { rows } = await t.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [other.id]);
    expect(rows).toEqual([{ revoked_at: null }]);
  });

  it('authenticates first: without a valid key the answer is 401, whatever the query', async () => {
    expectStorageError(await request(t.http).delete('/v1/storage/purge?dryRun=true'), 401, 'UNAUTHORIZED');
    expectApiError(await request(t.http).post('/v1/admin/organizations?x=1').send({ name: 'n' }), 401, 'UNAUTHORIZED');
  });

  it('names a parameter however it is spelt, and at most five of many', async () => {
    const odd = await api(t, org.key).get('/flags/quota?=1&a%22b=2&%F0%9F%8E%AE');
    expectApiError(odd, 400, 'VALIDATION_ERROR', /^Unknown query parameters "", "a\\"b", "🎮": this operation takes no query parameters$/);
    const many = Array.from({ length: 40 }, (_, i) => `p${i}=1`).join('&');
    expectApiError(
      await api(t, org.key).get(`/flags/quota?${many}`),
      400,
      'VALIDATION_ERROR',
      /^Unknown query parameters "p0", "p1", "p2", "p3", "p4" and 35 more: this operation takes no query parameters$/,
    );
  });

  it.each([
    ['in front of Express (production)', true],
    ["through Nest's router", false],
  ])('lets the config poll ignore any query parameter %s, and documents that', async (_path, leanConfigPoll) => {
    const app = leanConfigPoll ? t : await createTestApp({}, { leanConfigPoll: false });
    try {
      const poller = await createOrganization(app);
      const polled = await request(app.http).get(`${CONFIG_POLL}?_=1717171717&cb=x`).set(bearer(poller.key)).expect(200);
      expect(polled.body).toMatchObject({ flags: [] });
    } finally {
      if (app !== t) await app.close();
    }
    expect(paths[CONFIG_POLL].get['x-unknown-query-parameters']).toBe('ignored');
    expect(paths[CONFIG_POLL].get.responses['400']).toBeUndefined();
  });

  it('lets the SSO callback ignore what the provider adds, and documents that', () => {
    expect(paths[SSO_CALLBACK].get['x-unknown-query-parameters']).toBe('ignored');
    const ignoring = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation['x-unknown-query-parameters'] === 'ignored')
        .map(([method]) => `${method} ${path}`),
    );
    expect(new Set(ignoring)).toEqual(IGNORING);
  });
});
