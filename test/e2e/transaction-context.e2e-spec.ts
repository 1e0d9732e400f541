import request from 'supertest';
import { transactionStorage } from '../../src/database/transactions';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { propagatesContext } from '../support/async-context';
import { createTestApp, TestApp } from '../support/test-app';

describe('the transaction context', () => {
  let t: TestApp;
  let org: TestOrganization;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    await subscribe(t, org.id);
  });
  afterAll(() => t.close());

  it('is switched off once the writes in flight have committed, so polls and reads create resources without it', async () => {
    // Overlapping transactions that end at different times: each must keep its own to the end.
    const created = await Promise.all(Array.from({ length: 8 }, (_, index) => createFlag(t, org.key, { key: `overlap_${index}` })));
    const patched = await Promise.all(
      created.map((flag, index) => api(t, org.key).patch(`/flags/${flag.id}`).send({ name: `Renamed ${index}` })),
    );
    expect(patched.map((response) => response.status)).toEqual(created.map(() => 200));
    const { rows } = await t.db.query<{ flagKey: string; actions: string[] }>(
      `SELECT flag_key AS "flagKey", array_agg(action ORDER BY created_at) AS actions
         FROM flag_audit_entries WHERE organization_id = $1 AND flag_key LIKE 'overlap_%' GROUP BY flag_key`,
      [org.id],
    );
    expect(rows).toHaveLength(8);
    for (const row of rows) expect(row.actions).toHaveLength(2);
    await admin(t).post(`/organizations/${org.id}/api-keys`).send({ name: 'another', permissions: ['FLAGS_READ'] }).expect(201);
    await request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200);
    await request(t.http).get('/v1/flags').set(bearer(org.key)).expect(200);

    expect(propagatesContext(transactionStorage())).toBe(false);
  });
});
