import { createHash, randomUUID } from 'node:crypto';
import request from 'supertest';
import { admin, bearer, createApiKey, createOrganization, subscribe } from '../factories/organizations.factory';
import { Permission } from '../../src/auth/permission';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

describe('admin API and API keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('creates an organization with the default storage allocation', async () => {
    const response = await admin(t).post('/organizations').send({ name: 'Acme' }).expect(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme',
      storageAllocation: 1024 ** 3,
      createdAt: expect.any(String),
    });
  });

  it('changes the storage allocation, and 404s an unknown organization', async () => {
    const org = await createOrganization(t);
    const response = await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: 2048 }).expect(200);
    expect(response.body.storageAllocation).toBe(2048);
    const missing = await admin(t).patch('/organizations/00000000-0000-4000-8000-000000000000').send({ storageAllocation: 1 }).expect(404);
    expect(missing.body.message).toMatch(/not found/);
  });

  it('rejects admin calls without the admin token, or with an API key', async () => {
    const org = await createOrganization(t);
    await request(t.http).post('/v1/admin/organizations').send({ name: 'x' }).expect(401);
    await request(t.http).post('/v1/admin/organizations').set(bearer(org.key)).send({ name: 'x' }).expect(401);
  });

  it('answers a wrong admin token with 401 saying a valid one is required', async () => {
    const response = await request(t.http)
      .post('/v1/admin/organizations')
      .set(bearer(`${TEST_ADMIN_TOKEN}x`))
      .send({ name: 'x' });
    expectApiError(response, 401, 'UNAUTHORIZED', /^A valid admin token is required \(Authorization: Bearer <ADMIN_TOKEN>\)$/);
  });

  it('answers 401 to every admin call when ADMIN_TOKEN is unset, saying that no admin token is configured', async () => {
    const noAdmin = await createTestApp({ ADMIN_TOKEN: '' });
    try {
      for (const authorization of [bearer('anything-at-all-long-enough'), bearer(TEST_ADMIN_TOKEN), {}]) {
        const response = await request(noAdmin.http).post('/v1/admin/organizations').set(authorization).send({ name: 'x' });
        expectApiError(
          response,
          401,
          'UNAUTHORIZED',
          /^No admin token is configured: the admin API is off until the service is started with ADMIN_TOKEN set$/,
        );
      }
    } finally {
      await noAdmin.close();
    }
  });

  it('validates bodies with a message naming the field', async () => {
    const org = await createOrganization(t);
    const longName = await admin(t)
      .post('/organizations')
      .send({ name: 'a\uFE0F'.repeat(101) })
      .expect(400);
    expect(longName.body.message).toBe('name must be between 1 and 200 characters long');
    const nul = await admin(t).post('/organizations').send({ name: 'a\u0000' }).expect(400);
    expect(nul.body.message).toMatch(/^name must not contain the NUL character/);
    for (const storageAllocation of ['', ' ', true, '5', 1.5, -1]) {
      const loose = await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation }).expect(400);
      expect(loose.body.message).toMatch(/^storageAllocation must/);
    }
    const bad = await admin(t).post(`/organizations/${org.id}/api-keys`).send({ name: 'k', permissions: [] }).expect(400);
    expect(bad.body.message).toMatch(/permissions/);
    const unknown = await admin(t)
      .post(`/organizations/${org.id}/api-keys`)
      .send({ name: 'k', permissions: ['FLAGS_READ', 'EVERYTHING'] })
      .expect(400);
    expect(unknown.body.message).toMatch(/permissions/);
    const badUuid = await admin(t)
      .post('/organizations/not-a-uuid/api-keys')
      .send({ name: 'k', permissions: ['FLAGS_READ'] });
    expect(badUuid.status).toBe(400);
    expect(badUuid.body.message).toMatch(/orgId/);
  });

  it('issues a key shown once and stores only its hash', async () => {
    const org = await createOrganization(t);
    const key = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    expect(key.key).toMatch(/^fsk_/);
    const { rows } = await t.db.query('SELECT key_hash, to_jsonb(api_keys)::text AS "wholeRow" FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].key_hash).toBe(createHash('sha256').update(key.key).digest('hex'));
    expect(rows[0].wholeRow).not.toContain(key.key.slice('fsk_'.length));
    await request(t.http).get('/v1/flags/quota').set(bearer(key.key)).expect(200);
  });

  it('makes a revoked key answer 401 from the next request on, even when cached', async () => {
    const org = await createOrganization(t);
    const key = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    await request(t.http).get('/v1/flags/quota').set(bearer(key.key)).expect(200);
    await admin(t).delete(`/organizations/${org.id}/api-keys/${key.id}`).expect(204);
    await request(t.http).get('/v1/flags/quota').set(bearer(key.key)).expect(401);
    await request(t.http).get('/v1/flags/config').set(bearer(key.key)).expect(401);
    await admin(t).delete(`/organizations/${org.id}/api-keys/${key.id}`).expect(404);
  });

  it('adds and cancels subscriptions', async () => {
    const org = await createOrganization(t);
    const created = await admin(t).post(`/organizations/${org.id}/subscriptions`).send({ plan: 'pro' }).expect(201);
    expect(created.body).toEqual({ id: expect.any(String), plan: 'pro', status: 'active', createdAt: expect.any(String) });
    await admin(t).delete(`/organizations/${org.id}/subscriptions/${created.body.id}`).expect(204);
    await admin(t).delete(`/organizations/${org.id}/subscriptions/${created.body.id}`).expect(404);
    const { rows } = await t.db.query('SELECT status FROM subscriptions WHERE id = $1', [created.body.id]);
    expect(rows[0].status).toBe('cancelled');
  });

  it('rejects a missing, malformed or unknown bearer key with 401', async () => {
    await request(t.http).get('/v1/flags/quota').expect(401);
    await request(t.http).get('/v1/flags/quota').set({ Authorization: 'Basic abc' }).expect(401);
    const response = await request(t.http).get('/v1/flags/quota').set(bearer('fsk_unknown'));
    expectApiError(response, 401, 'UNAUTHORIZED', /^Missing or invalid API key$/);
  });

  describe('read-back', () => {
    /** A name prefix no other test uses, so that a search finds exactly what a test made. */
    const tag = () => `rb${randomUUID().slice(0, 8)}`;
    const createNamed = async (name: string) => (await admin(t).post('/organizations').send({ name }).expect(201)).body;
    const names = (body: { results: { name: string }[] }) => body.results.map((organization) => organization.name);

    it('lists organizations newest first, a page at a time', async () => {
      const prefix = tag();
      const [alpha, beta, gamma] = [await createNamed(`${prefix} Alpha`), await createNamed(`${prefix} Beta`), await createNamed(`${prefix} Gamma`)];
      const first = await admin(t).get(`/organizations?search=${prefix}&limit=2`).expect(200);
      expect(first.body).toEqual({ results: [gamma, beta], total: 3, page: 1, totalPages: 2 });
      const second = await admin(t).get(`/organizations?search=${prefix}&limit=2&page=2`).expect(200);
      expect(second.body).toEqual({ results: [alpha], total: 3, page: 2, totalPages: 2 });
      const beyond = await admin(t).get(`/organizations?search=${prefix}&limit=2&page=5`).expect(200);
      expect(beyond.body).toEqual({ results: [], total: 3, page: 5, totalPages: 2 });
    });

    it('lists every organization, 20 to a page, when no search is given (an empty search is none)', async () => {
      const newest = await createNamed(`${tag()} Newest`);
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM organizations');
      for (const query of ['', '?search=']) {
        const response = await admin(t).get(`/organizations${query}`).expect(200);
        expect(response.body.results[0]).toEqual(newest);
        expect(response.body.results).toHaveLength(Math.min(rows[0].n, 20));
        expect(response.body).toMatchObject({ total: rows[0].n, page: 1, totalPages: Math.ceil(rows[0].n / 20) });
      }
    });

    it('searches names case-insensitively, treating % and _ literally', async () => {
      const prefix = tag();
      await createNamed(`${prefix} Studio 100% Fun`);
      await createNamed(`${prefix} Studio 1000 Fun`);
      await createNamed(`${prefix} Game_Works`);
      await createNamed(`${prefix} GameXWorks`);
      const upper = await admin(t).get(`/organizations?search=${prefix.toUpperCase()}%20STUDIO`).expect(200);
      expect(names(upper.body).sort()).toEqual([`${prefix} Studio 100% Fun`, `${prefix} Studio 1000 Fun`]);
      const percent = await admin(t)
        .get(`/organizations?search=${encodeURIComponent(`${prefix} Studio 100%`)}`)
        .expect(200);
      expect(names(percent.body)).toEqual([`${prefix} Studio 100% Fun`]);
      const underscore = await admin(t).get(`/organizations?search=${prefix}%20game_works`).expect(200);
      expect(names(underscore.body)).toEqual([`${prefix} Game_Works`]);
      expect(underscore.body.total).toBe(1);
      const backslash = await admin(t)
        .get(`/organizations?search=${encodeURIComponent(`${prefix}\\`)}`)
        .expect(200);
      expect(backslash.body).toEqual({ results: [], total: 0, page: 1, totalPages: 0 });
    });

    it('reads an organization back with its keys, revoked ones dated, and its subscriptions, cancelled ones dated', async () => {
      const org = await createNamed(`${tag()} Detail`);
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const writer = await createApiKey(t, org.id, [Permission.STORAGE_READ, Permission.STORAGE_WRITE]);
      await admin(t).delete(`/organizations/${org.id}/api-keys/${writer.id}`).expect(204);
      const cancelled = await subscribe(t, org.id, 'starter');
      await admin(t).delete(`/organizations/${org.id}/subscriptions/${cancelled}`).expect(204);
      const active = await subscribe(t, org.id, 'pro');

      const response = await admin(t).get(`/organizations/${org.id}`).expect(200);
      const { rows: keyRows } = await t.db.query('SELECT id, created_at, revoked_at FROM api_keys WHERE organization_id = $1', [org.id]);
      const { rows: subscriptionRows } = await t.db.query('SELECT id, created_at, cancelled_at FROM subscriptions WHERE organization_id = $1', [
        org.id,
      ]);
      const stored = <T extends { id: string }>(rows: T[], id: string) => rows.find((row) => row.id === id)!;
      const iso = (date: Date | null) => date?.toISOString() ?? null;
      expect(response.body).toEqual({
        ...org,
        // Its own flag allowance (none: the level's) and the quota that applies (decisions.md, "A studio's own deployment").
        flagAllowance: null,
        flagQuota: { max: 50, used: 0, subscribed: true, locked: 0 },
        apiKeys: [
          {
            id: reader.id,
            name: 'key-flags_read',
            permissions: ['FLAGS_READ'],
            createdAt: iso(stored(keyRows, reader.id).created_at),
            revokedAt: null,
          },
          {
            id: writer.id,
            name: 'key-storage_read-storage_write',
            permissions: ['STORAGE_READ', 'STORAGE_WRITE'],
            createdAt: iso(stored(keyRows, writer.id).created_at),
            revokedAt: iso(stored(keyRows, writer.id).revoked_at),
          },
        ],
        subscriptions: [
          {
            id: cancelled,
            plan: 'starter',
            status: 'cancelled',
            createdAt: iso(stored(subscriptionRows, cancelled).created_at),
            cancelledAt: iso(stored(subscriptionRows, cancelled).cancelled_at),
          },
          { id: active, plan: 'pro', status: 'active', createdAt: iso(stored(subscriptionRows, active).created_at), cancelledAt: null },
        ],
      });
      expect(response.body.apiKeys[1].revokedAt).toEqual(expect.any(String));
    });

    it('never shows a key or its hash, in the organization or in the list', async () => {
      const name = `${tag()} Secretive`;
      const org = await createOrganization(t, name);
      const other = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      const { rows } = await t.db.query('SELECT key_hash FROM api_keys WHERE organization_id = $1', [org.id]);
      expect(rows).toHaveLength(2);
      const secrets = [org.key, other.key, ...rows.map((row) => row.key_hash as string)];
      // Each secret whole, and a long piece of each: a key shown in part (or transformed) is still a leak.
      const pieces = secrets.flatMap((secret) => [secret, secret.slice(-24)]);
      for (const path of [`/organizations/${org.id}`, `/organizations?search=${encodeURIComponent(name)}`, '/organizations?limit=100']) {
        const response = await admin(t).get(path).expect(200);
        for (const piece of pieces) expect(response.text).not.toContain(piece);
      }
      const detail = await admin(t).get(`/organizations/${org.id}`).expect(200);
      for (const apiKey of detail.body.apiKeys) expect(Object.keys(apiKey).sort()).toEqual(['createdAt', 'id', 'name', 'permissions', 'revokedAt']);
    });

    it('answers 401 without the admin token, or with an API key', async () => {
      const org = await createOrganization(t);
      for (const path of ['/v1/admin/organizations', `/v1/admin/organizations/${org.id}`]) {
        expectApiError(await request(t.http).get(path), 401, 'UNAUTHORIZED', /admin token/);
        expectApiError(await request(t.http).get(path).set(bearer(org.key)), 401, 'UNAUTHORIZED', /admin token/);
        expectApiError(await request(t.http).get(path).set(bearer('wrong-admin-token-0123456789abcdefghij')), 401, 'UNAUTHORIZED', /admin token/);
      }
    });

    it('answers 404 for an unknown organization and 400 naming orgId for a malformed one', async () => {
      const missing = await admin(t).get('/organizations/00000000-0000-4000-8000-000000000000');
      expectApiError(missing, 404, 'ORGANIZATION_NOT_FOUND', /^Organization 00000000-0000-4000-8000-000000000000 not found$/);
      for (const malformed of ['not-a-uuid', '123', '00000000-0000-4000-8000-00000000000g']) {
        expectApiError(await admin(t).get(`/organizations/${malformed}`), 400, 'VALIDATION_ERROR', /^orgId must be a valid UUID$/);
      }
    });

    it.each([
      ['page=0', /^page must not be less than 1$/],
      ['page=abc', /^page must be an integer number$/],
      ['page=1000000001', /^page must not be greater than 1000000000$/],
      ['limit=0', /^limit must not be less than 1$/],
      ['limit=101', /^limit must not be greater than 100$/],
      ['limit=', /^limit must be an integer number$/],
      ['limit=1.5', /^limit must be an integer number$/],
      [`search=${'a'.repeat(101)}`, /^search must be shorter than or equal to 100 characters$/],
      ['search=a&search=b', /^search must be a string$/],
      ['search=%00', /^search must not contain the NUL character/],
    ])('refuses %s with 400 naming the field', async (query, message) => {
      expectApiError(await admin(t).get(`/organizations?${query}`), 400, 'VALIDATION_ERROR', message);
    });
  });

  it('serves health and the OpenAPI document without a key', async () => {
    await request(t.http).get('/health').expect(200, { status: 'ok', database: 'up' });
    const doc = await request(t.http).get('/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
