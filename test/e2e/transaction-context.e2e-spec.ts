import request from 'supertest';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { anyContextPropagates } from '../support/async-context';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Transactions are values passed by hand (src/database/transactions.ts), not a context carried by the async
 * calls: concurrent writes must still each keep their own, and nothing may leave an async context behind for
 * the config poll to pay for.
 */
describe('transactions', () => {
  let t: TestApp;
  let org: TestOrganization;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    await subscribe(t, org.id);
  });
  afterAll(() => t.close());

  const history = async (prefix: string) => {
    const { rows } = await t.db.query<{ flagKey: string; actions: string[]; names: string[] }>(
      `SELECT flag_key AS "flagKey", array_agg(action ORDER BY created_at, id) AS actions,
              array_agg(after->>'name' ORDER BY created_at, id) AS names
         FROM flag_audit_entries WHERE organization_id = $1 AND flag_key LIKE $2 GROUP BY flag_key ORDER BY flag_key`,
      [org.id, `${prefix}%`],
    );
    return rows;
  };
  const storedNames = async (prefix: string) => {
    const { rows } = await t.db.query<{ key: string; name: string }>(
      `SELECT key, name FROM flags WHERE organization_id = $1 AND key LIKE $2 ORDER BY key`,
      [org.id, `${prefix}%`],
    );
    return rows;
  };

  it('keep overlapping writes apart: every create and PATCH commits with its own audit entry, and nothing else', async () => {
    // Overlapping transactions that end at different times: each must keep its own to the end.
    const created = await Promise.all(Array.from({ length: 8 }, (_, index) => createFlag(t, org.key, { key: `overlap_${index}` })));
    const patched = await Promise.all(
      created.map((flag, index) =>
        api(t, org.key)
          .patch(`/flags/${flag.id}`)
          .send({ name: `Renamed ${index}` }),
      ),
    );
    expect(patched.map((response) => response.status)).toEqual(created.map(() => 200));
    expect(patched.map((response) => response.body.name)).toEqual(created.map((_, index) => `Renamed ${index}`));
    expect(await storedNames('overlap_')).toEqual(created.map((_, index) => ({ key: `overlap_${index}`, name: `Renamed ${index}` })));
    expect(await history('overlap_')).toEqual(
      created.map((_, index) => ({
        flagKey: `overlap_${index}`,
        actions: ['flag.create', 'flag.update'],
        names: [`Flag overlap_${index}`, `Renamed ${index}`],
      })),
    );
  });

  it('roll back every statement of a write that fails, while the writes beside it commit', async () => {
    const created = await Promise.all(Array.from({ length: 6 }, (_, index) => createFlag(t, org.key, { key: `beside_${index}` })));
    // The audit insert fails for two of the flags, after their flag row was updated in the same transaction.
    await t.db.query(`
      CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.flag_key IN ('beside_1', 'beside_4') THEN RAISE EXCEPTION 'audit storage unavailable'; END IF;
        RETURN NEW;
      END $$`);
    await t.db.query(`CREATE TRIGGER test_refuse_audit BEFORE INSERT ON flag_audit_entries
      FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()`);
    let patched;
    try {
      patched = await Promise.all(
        created.map((flag, index) =>
          api(t, org.key)
            .patch(`/flags/${flag.id}`)
            .send({ name: `Renamed ${index}` }),
        ),
      );
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_audit ON flag_audit_entries');
      await t.db.query('DROP FUNCTION test_refuse_audit()');
    }
    const failed = new Set([1, 4]);
    expect(patched.map((response) => response.status)).toEqual(created.map((_, index) => (failed.has(index) ? 500 : 200)));
    expect(await storedNames('beside_')).toEqual(
      created.map((_, index) => ({ key: `beside_${index}`, name: failed.has(index) ? `Flag beside_${index}` : `Renamed ${index}` })),
    );
    expect((await history('beside_')).map(({ flagKey, actions }) => ({ flagKey, actions }))).toEqual(
      created.map((_, index) => ({
        flagKey: `beside_${index}`,
        actions: failed.has(index) ? ['flag.create'] : ['flag.create', 'flag.update'],
      })),
    );
    // The organization's row lock went with the failed transactions: the next write takes it at once.
    await api(t, org.key).patch(`/flags/${created[1].id}`).send({ name: 'Renamed at last' }).expect(200);
  });

  it('leave no async context behind: after writes, promises and timers carry none, so polls and reads create resources without one', async () => {
    await Promise.all(Array.from({ length: 4 }, (_, index) => createFlag(t, org.key, { key: `context_${index}` })));
    await admin(t)
      .post(`/organizations/${org.id}/api-keys`)
      .send({ name: 'another', permissions: ['FLAGS_READ'] })
      .expect(201);
    await request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200);
    await request(t.http).get('/v1/flags').set(bearer(org.key)).expect(200);

    expect(anyContextPropagates()).toBe(false);
  });
});
