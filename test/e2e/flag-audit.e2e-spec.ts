import { Permission } from '../../src/auth/permission';
import { api, createFlag, flagBody, storedFlagVersion } from '../factories/flags.factory';
import { createApiKey, createOrganization } from '../factories/organizations.factory';
import { useTestApp } from '../support/test-suite';

const snapshot = (overrides: Record<string, unknown> = {}) => ({
  name: 'Flag k',
  description: null,
  type: 'boolean',
  value: true,
  runtime: 'shared',
  archived: false,
  ...overrides,
});

describe('flag audit log', () => {
  const { t, org } = useTestApp({ subscribed: true });

  async function entries(query = '') {
    const response = await api(t, org.key).get(`/flags/audit${query}`).expect(200);
    return response.body;
  }

  it('records a creation with the API key as actor', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const body = await entries();
    expect(body).toEqual({
      results: [
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          flagId: flag.id,
          flagKey: 'k',
          actorType: 'apiKey',
          actorId: org.keyId,
          action: 'flag.create',
          before: null,
          after: snapshot(),
          createdAt: expect.any(String),
        },
      ],
      total: 1,
      page: 1,
      totalPages: 1,
    });
  });

  it.each([
    ['a rename', {}, { name: 'New' }, 'flag.update', { name: 'New' }],
    ['a description change', {}, { description: 'why' }, 'flag.update', { description: 'why' }],
    ['a value change', {}, { type: 'boolean', value: false }, 'flag.value.set', { value: false }],
    ['a type change', {}, { type: 'string', value: 'on' }, 'flag.value.set', { type: 'string', value: 'on' }],
    ['a runtime change', {}, { runtime: 'server' }, 'flag.runtime.set', { runtime: 'server' }],
    [
      'runtime and value together',
      {},
      { runtime: 'server', type: 'number', value: 2 },
      'flag.runtime.set',
      { runtime: 'server', type: 'number', value: 2 },
    ],
    ['value with a rename', {}, { type: 'boolean', value: false, name: 'N' }, 'flag.value.set', { value: false, name: 'N' }],
    ['archiving', {}, { archived: true }, 'flag.archive', { archived: true }],
    ['archiving with a rename', {}, { archived: true, name: 'N' }, 'flag.archive', { archived: true, name: 'N' }],
  ])('labels %s', async (_case, _setup, patch, action, changed) => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send(patch).expect(200);
    const [latest] = (await entries()).results;
    expect(latest).toMatchObject({ flagId: flag.id, flagKey: 'k', action, before: snapshot(), after: snapshot(changed) });
  });

  it('labels a restore, and a restore with a value change as a value change', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: false }).expect(200);
    expect((await entries()).results[0]).toMatchObject({ action: 'flag.unarchive', after: snapshot() });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: false, type: 'boolean', value: false }).expect(200);
    expect((await entries()).results[0]).toMatchObject({
      action: 'flag.value.set',
      before: snapshot({ archived: true }),
      after: snapshot({ value: false }),
    });
  });

  it('writes nothing for a change that changes nothing', async () => {
    const flag = await createFlag(t, org.key, { key: 'k', type: 'json', value: { a: 1, b: [1, 2] } });
    const before = await storedFlagVersion(t, flag.id);
    expect(before.auditEntries).toBe(1);
    await api(t, org.key)
      .patch(`/flags/${flag.id}`)
      .send({ name: 'Flag k', type: 'json', value: { b: [1, 2], a: 1 }, runtime: 'shared', archived: false })
      .expect(200);
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
    expect((await entries()).total).toBe(1);
  });

  it('records a deletion and keeps the history readable by key, with flagId cleared', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed' }).expect(200);
    const before = await entries(`?flagId=${flag.id}`);
    expect(before.total).toBe(2);
    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const body = await entries();
    expect(body.results.map((entry: { action: string }) => entry.action)).toEqual(['flag.delete', 'flag.update', 'flag.create']);
    expect(body.results[0]).toMatchObject({ flagId: null, flagKey: 'k', before: snapshot({ name: 'Renamed' }), after: null });
    for (const entry of body.results) expect(entry).toMatchObject({ flagId: null, flagKey: 'k' });
  });

  it('lists newest first, paginates, and filters by flag', async () => {
    const a = await createFlag(t, org.key, { key: 'a' });
    const b = await createFlag(t, org.key, { key: 'b' });
    await api(t, org.key).patch(`/flags/${a.id}`).send({ name: 'A2' }).expect(200);
    const page1 = await entries('?limit=2');
    expect(page1).toMatchObject({ total: 3, page: 1, totalPages: 2 });
    expect(page1.results.map((entry: { flagKey: string; action: string }) => `${entry.flagKey}:${entry.action}`)).toEqual([
      'a:flag.update',
      'b:flag.create',
    ]);
    const page2 = await entries('?limit=2&page=2');
    expect(page2.results.map((entry: { flagKey: string }) => entry.flagKey)).toEqual(['a']);
    const onlyB = await entries(`?flagId=${b.id}`);
    expect(onlyB).toMatchObject({ total: 1, results: [{ flagId: b.id, action: 'flag.create' }] });
    const bad = await api(t, org.key).get('/flags/audit?flagId=nope').expect(400);
    expect(bad.body.message).toMatch(/flagId must be a valid UUID/);
    await api(t, org.key).get('/flags/audit?limit=101').expect(400);
  });

  it("shows only the caller organization's entries and needs FLAGS_READ", async () => {
    const other = await createOrganization(t);
    const theirs = await createFlag(t, other.key, { key: 'theirs' });
    await createFlag(t, org.key, { key: 'mine' });
    expect((await entries()).results.map((entry: { flagKey: string }) => entry.flagKey)).toEqual(['mine']);
    expect((await entries(`?flagId=${theirs.id}`)).total).toBe(0);
    const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
    await api(t, writer.key).get('/flags/audit').expect(403);
  });

  it('refuses updates and deletes of entries at the database', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await expect(t.db.query(`UPDATE flag_audit_entries SET action = 'flag.update' WHERE organization_id = $1`, [org.id])).rejects.toThrow(
      /append-only/,
    );
    // Detaching a live flag's history is refused; only the flag's deletion clears flag_id.
    await expect(t.db.query('UPDATE flag_audit_entries SET flag_id = NULL WHERE organization_id = $1', [org.id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM flag_audit_entries WHERE organization_id = $1', [org.id])).rejects.toThrow(/append-only/);
    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const { rows } = await t.db.query('SELECT flag_id FROM flag_audit_entries WHERE organization_id = $1', [org.id]);
    expect(rows).toEqual([{ flag_id: null }, { flag_id: null }]);
  });

  it('never leaves a flag change without its audit entry, nor an entry without its change', async () => {
    // Make the audit insert fail for one key: the flag write in the same transaction must roll back.
    await t.db.query(`
      CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.flag_key = 'doomed' THEN RAISE EXCEPTION 'audit storage unavailable'; END IF;
        RETURN NEW;
      END $$`);
    await t.db.query(`CREATE TRIGGER test_refuse_audit BEFORE INSERT ON flag_audit_entries
      FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()`);
    try {
      const create = await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'doomed' }));
      expect(create.status).toBe(500);
      expect(create.body).toEqual({ statusCode: 500, error: 'INTERNAL_ERROR', message: 'Internal server error' });
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM flags WHERE key = 'doomed'`);
      expect(rows[0].n).toBe(0);
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_audit ON flag_audit_entries');
      await t.db.query('DROP FUNCTION test_refuse_audit()');
    }

    const flag = await createFlag(t, org.key, { key: 'k' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: true }).expect(409);
    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const { rows } = await t.db.query(`SELECT action FROM flag_audit_entries WHERE organization_id = $1 ORDER BY created_at, id`, [org.id]);
    expect(rows.map((row: { action: string }) => row.action)).toEqual(['flag.create', 'flag.value.set', 'flag.archive', 'flag.delete']);
  });
});
