import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization } from '../factories/organizations.factory';
import { eventually } from '../support/eventually';
import { createTestApp, TestApp } from '../support/test-app';

// Other instances hear of a change just after its commit: within two seconds.
const HEARD_WITHIN_MS = 2_000;

// Two instances of one deployment on one database: each keeps in-memory caches (API keys, config
// payloads), which the invalidation bus (Redis when REDIS_URL is set, PostgreSQL NOTIFY otherwise) keeps true.
describe('several instances of one deployment', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({}, { sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('shows a flag edited on one instance in the config polled from the other', async () => {
    const org = await createOrganization(a);
    const flag = await createFlag(a, org.key, { key: 'k' });
    const first = await request(b.http).get('/v1/flags/config').set(bearer(org.key)).expect(200);
    expect(first.body.flags).toEqual([{ key: 'k', type: 'boolean', value: true, runtime: 'shared' }]);

    await api(a, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    await eventually(
      async () => {
        const poll = await request(b.http).get('/v1/flags/config').set(bearer(org.key)).set('If-None-Match', first.headers.etag);
        return poll.status === 200 && poll.body.flags[0].value === false;
      },
      { timeoutMs: HEARD_WITHIN_MS, what: 'the other instance serving the edited value' },
    );
  });

  it('refuses a key revoked on one instance on the other, although the other had it cached', async () => {
    const org = await createOrganization(a);
    const key = await createApiKey(a, org.id, [Permission.FLAGS_READ]);
    await request(b.http).get('/v1/flags/config').set(bearer(key.key)).expect(200);
    await admin(a).delete(`/organizations/${org.id}/api-keys/${key.id}`).expect(204);
    await eventually(async () => (await request(b.http).get('/v1/flags/config').set(bearer(key.key))).status === 401, {
      timeoutMs: HEARD_WITHIN_MS,
      what: 'the other instance refusing the revoked key',
    });
  });
});
