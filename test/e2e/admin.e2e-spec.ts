import { createHash } from 'node:crypto';
import request from 'supertest';
import { admin, bearer, createApiKey, createOrganization } from '../factories/organizations.factory';
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

  it('serves health and the OpenAPI document without a key', async () => {
    await request(t.http).get('/health').expect(200, { status: 'ok', database: 'up' });
    const doc = await request(t.http).get('/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
