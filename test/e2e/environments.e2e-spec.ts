import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { queriesDuring } from '../support/queries';
import { createTestApp, TestApp } from '../support/test-app';

type Exported = { key: string; name: string; description: string | null; type: string; value: unknown; runtime: string; archived: boolean };

describe('environments: export a flag configuration and import it into another organization', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const exportOf = async (org: TestOrganization) => (await api(t, org.key).get('/flags/export').expect(200)).body as { flags: Exported[] };
  const importInto = (org: TestOrganization, body: unknown) =>
    api(t, org.key)
      .post('/flags/import')
      .send(body as object);
  /** What proves nothing was written: every flag row version and the number of audit entries. */
  const stateOf = async (org: TestOrganization) => {
    const flags = await t.db.query('SELECT key, xmin::text AS version FROM flags WHERE organization_id = $1 ORDER BY key', [org.id]);
    const audit = await t.db.query('SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1', [org.id]);
    return { flags: flags.rows, audit: audit.rows[0].n };
  };

  /** A staging organization with four flags of every kind, one archived, one with keys a JSON object rarely has. */
  async function staging(): Promise<TestOrganization> {
    const org = await createOrganization(t, 'Staging');
    await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true, description: 'Weekend event' });
    await createFlag(t, org.key, { key: 'gem-price', type: 'number', value: 12.5, runtime: 'server' });
    await createFlag(t, org.key, {
      key: 'loot',
      type: 'json',
      value: JSON.parse('{"__proto__":{"rare":1},"constructor":"kept","tiers":[1,2,{"x":null}]}'),
    });
    const old = await createFlag(t, org.key, { key: 'old-banner', type: 'string', value: 'Autumn' });
    await api(t, org.key).patch(`/flags/${old.id}`).send({ archived: true }).expect(200);
    return org;
  }

  it('round-trips: export A, import into an empty B, export B equals export A, audited as the caller', async () => {
    const a = await staging();
    const b = await createOrganization(t, 'Production');
    const document = await exportOf(a);
    expect(document.flags.map((flag) => flag.key)).toEqual(['double-xp', 'gem-price', 'loot', 'old-banner']);
    expect(document.flags[0]).toEqual({
      key: 'double-xp',
      name: 'Flag double-xp',
      description: 'Weekend event',
      type: 'boolean',
      value: true,
      runtime: 'shared',
      archived: false,
    });
    expect(Object.keys(document.flags[2].value as object).sort()).toEqual(['__proto__', 'constructor', 'tiers']);

    const report = await importInto(b, document).expect(200);
    expect(report.body).toEqual({ created: ['double-xp', 'gem-price', 'loot', 'old-banner'], updated: [], unchanged: [], refused: [] });
    expect(await exportOf(b)).toEqual(document);
    const audit = await api(t, b.key).get('/flags/audit').expect(200);
    expect(
      audit.body.results.map((entry: { action: string; actorType: string; actorId: string }) => [entry.action, entry.actorType, entry.actorId]),
    ).toEqual(Array.from({ length: 4 }, () => ['flag.create', 'apiKey', b.keyId]));
    // Again: nothing to do.
    expect((await importInto(b, document).expect(200)).body).toEqual({
      created: [],
      updated: [],
      unchanged: ['double-xp', 'gem-price', 'loot', 'old-banner'],
      refused: [],
    });
  });

  it('updates what differs, with before and after, and leaves flags absent from the document alone', async () => {
    const a = await staging();
    const b = await createOrganization(t, 'Production');
    await createFlag(t, b.key, { key: 'double-xp', type: 'boolean', value: false });
    await createFlag(t, b.key, { key: 'prod-only', type: 'boolean', value: true });
    const report = await importInto(b, { ...(await exportOf(a)), keys: ['double-xp', 'gem-price'] }).expect(200);
    expect(report.body).toEqual({
      created: ['gem-price'],
      updated: [
        {
          key: 'double-xp',
          before: { name: 'Flag double-xp', description: null, type: 'boolean', value: false, runtime: 'shared', archived: false },
          after: { name: 'Flag double-xp', description: 'Weekend event', type: 'boolean', value: true, runtime: 'shared', archived: false },
        },
      ],
      unchanged: [],
      refused: [],
    });
    expect((await exportOf(b)).flags.map((flag) => [flag.key, flag.value])).toEqual([
      ['double-xp', true],
      ['gem-price', 12.5],
      ['prod-only', true],
    ]);
    const audit = await api(t, b.key).get('/flags/audit?flagKey=double-xp').expect(200);
    expect(audit.body.results[0]).toMatchObject({ action: 'flag.value.set', actorType: 'apiKey' });
  });

  it('changes nothing on a dry run, and reports what a real import would do, refusals included', async () => {
    const a = await staging();
    const b = await createOrganization(t, 'Production');
    for (const key of ['p1', 'p2', 'p3']) await createFlag(t, b.key, { key });
    const before = await stateOf(b);
    const dry = await importInto(b, { ...(await exportOf(a)), dryRun: true }).expect(200);
    // Allowance 5: two of the four fit.
    expect(dry.body).toEqual({
      created: ['double-xp', 'gem-price'],
      updated: [],
      unchanged: [],
      refused: [
        { key: 'loot', reason: expect.stringMatching(/allowance reached.*5 flags/i) },
        { key: 'old-banner', reason: expect.stringMatching(/allowance reached/i) },
      ],
    });
    expect(await stateOf(b)).toEqual(before);

    const real = await importInto(b, await exportOf(a));
    expectApiErrorWithReport(real, 'IMPORT_REFUSED');
    expect({ created: real.body.created, updated: real.body.updated, unchanged: real.body.unchanged, refused: real.body.refused }).toEqual(dry.body);
    expect(await stateOf(b)).toEqual(before);
    // With a subscription (allowance 50) all of it goes in.
    await subscribe(t, b.id);
    expect((await importInto(b, await exportOf(a)).expect(200)).body.created).toHaveLength(4);
  });

  function expectApiErrorWithReport(response: request.Response, code: string) {
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      statusCode: 409,
      error: code,
      message: expect.stringMatching(/refuses \d+ of the flags.*nothing was imported/),
      created: expect.any(Array),
      updated: expect.any(Array),
      unchanged: expect.any(Array),
      refused: expect.any(Array),
    });
  }

  it('refuses changes to a locked flag (past the allowance after a subscription ended), touching nothing', async () => {
    const b = await createOrganization(t, 'Production');
    const subscription = await subscribe(t, b.id);
    for (const key of ['f1', 'f2', 'f3', 'f4', 'f5', 'f6']) await createFlag(t, b.key, { key });
    await admin(t).delete(`/organizations/${b.id}/subscriptions/${subscription}`).expect(204);
    const document = await exportOf(b);
    const f6 = document.flags.find((flag) => flag.key === 'f6')!;
    const before = await stateOf(b);
    const refused = await importInto(b, {
      flags: [
        { ...f6, value: false },
        { ...document.flags[0], name: 'Renamed' },
      ],
    });
    expectApiErrorWithReport(refused, 'IMPORT_REFUSED');
    expect(refused.body.refused).toEqual([{ key: 'f6', reason: expect.stringMatching(/beyond the plan's limit/) }]);
    expect(refused.body.updated.map((update: { key: string }) => update.key)).toEqual(['f1']);
    expect(await stateOf(b)).toEqual(before);
    // Archiving a locked flag stays allowed, as through PATCH.
    const archived = await importInto(b, { flags: [{ ...f6, archived: true }] }).expect(200);
    expect(archived.body.updated).toEqual([
      { key: 'f6', before: expect.objectContaining({ archived: false }), after: expect.objectContaining({ archived: true }) },
    ]);
  });

  it('applies the archived-value rule: a value changes only on a flag that is or becomes active', async () => {
    const b = await createOrganization(t, 'Production');
    const flag = await createFlag(t, b.key, { key: 'banner', type: 'string', value: 'Autumn' });
    await api(t, b.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
    const [current] = (await exportOf(b)).flags;
    const stays = await importInto(b, { flags: [{ ...current, value: 'Winter' }] });
    expectApiErrorWithReport(stays, 'IMPORT_REFUSED');
    expect(stays.body.refused).toEqual([{ key: 'banner', reason: expect.stringMatching(/archived: restore it/) }]);
    const restored = await importInto(b, { flags: [{ ...current, value: 'Winter', archived: false }] }).expect(200);
    expect(restored.body.updated[0].after).toMatchObject({ value: 'Winter', archived: false });
  });

  it('refuses a malformed document with 400 naming the flag and the field, writing nothing', async () => {
    const b = await createOrganization(t, 'Production');
    const good = { key: 'ok', name: 'OK', description: null, type: 'boolean', value: true, runtime: 'shared', archived: false };
    const before = await stateOf(b);
    expectApiError(await importInto(b, {}), 400, 'VALIDATION_ERROR', /flags must be an array/);
    expectApiError(await importInto(b, { flags: 'all' }), 400, 'VALIDATION_ERROR', /flags must be an array/);
    expectApiError(await importInto(b, { flags: [good, 7] }), 400, 'VALIDATION_ERROR', /^flags\[1\] must be an object$/);
    expectApiError(
      await importInto(b, { flags: [good, { ...good, key: 'n', type: 'number', value: 'ten' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[1\] \("n"\): value must be a finite number/,
    );
    expectApiError(
      await importInto(b, { flags: [{ ...good, key: 'Bad Key' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[0\] \("Bad Key"\): key must match/,
    );
    expectApiError(
      await importInto(b, { flags: [{ ...good, runtime: 'client' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[0\] \("ok"\): runtime must be one of/,
    );
    expectApiError(
      await importInto(b, { flags: [{ ...good, archived: 'no' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[0\] \("ok"\): archived must be true or false/,
    );
    expectApiError(
      await importInto(b, { flags: [{ ...good, id: 'x' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[0\] \("ok"\): property id should not exist/,
    );
    expectApiError(
      await importInto(b, { flags: [{ ...good, value: 'x'.repeat(5000), type: 'string' }] }),
      400,
      'VALIDATION_ERROR',
      /^flags\[0\] \("ok"\): value/,
    );
    expectApiError(await importInto(b, { flags: [good, good] }), 400, 'VALIDATION_ERROR', /^flags\[1\] \("ok"\): key "ok" is in the document twice$/);
    expectApiError(
      await importInto(b, { flags: [good], keys: ['missing'] }),
      400,
      'VALIDATION_ERROR',
      /^keys: "missing" is not a flag of the document$/,
    );
    expectApiError(await importInto(b, { flags: [good], dryRun: 'yes' }), 400, 'VALIDATION_ERROR', /dryRun/);
    expect(await stateOf(b)).toEqual(before);
  });

  it('takes FLAGS_READ to export and FLAGS_WRITE to import, and a session’s import is the user’s', async () => {
    const a = await staging();
    const b = await createOrganization(t, 'Production');
    const reader = await createApiKey(t, b.id, [Permission.FLAGS_READ]);
    const writerOnly = await createApiKey(t, b.id, [Permission.FLAGS_WRITE]);
    const document = await exportOf(a);
    await request(t.http).get('/v1/flags/export').set(bearer(reader.key)).expect(200);
    expectApiError(await request(t.http).get('/v1/flags/export').set(bearer(writerOnly.key)), 403, 'FORBIDDEN', /FLAGS_READ/);
    expectApiError(await request(t.http).post('/v1/flags/import').set(bearer(reader.key)).send(document), 403, 'FORBIDDEN', /FLAGS_WRITE/);
    await request(t.http).get('/v1/flags/export').expect(401);

    const viewer = await memberSignedIn(t, b.id, 'viewer');
    const editor = await memberSignedIn(t, b.id, 'editor');
    await asSession(t, viewer, b.id).get('/flags/export').expect(200);
    expectApiError(await asSession(t, viewer, b.id).post('/flags/import').send(document), 403, 'FORBIDDEN');
    await asSession(t, editor, b.id)
      .post('/flags/import')
      .send({ ...document, keys: ['double-xp'] })
      .expect(200);
    const audit = await api(t, b.key).get('/flags/audit?flagKey=double-xp').expect(200);
    expect(audit.body.results[0]).toMatchObject({ action: 'flag.create', actorType: 'session', actorId: editor.userId });
  });

  it('serialises two imports racing into one organization: the allowance is never overshot', async () => {
    for (let round = 0; round < 3; round += 1) {
      const b = await createOrganization(t, 'Production');
      const flag = (key: string) => ({ key, name: key, description: null, type: 'boolean', value: true, runtime: 'shared', archived: false });
      const [first, second] = await Promise.all([
        importInto(b, { flags: ['a1', 'a2', 'a3'].map(flag) }),
        importInto(b, { flags: ['b1', 'b2', 'b3'].map(flag) }),
      ]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [b.id]);
      expect(rows[0].n).toBe(3);
    }
  });

  it('imports 50 flags with 4 KB values (a body past 256 KB) for one payload rebuild and one announcement', async () => {
    const a = await createOrganization(t, 'Staging');
    await subscribe(t, a.id);
    const b = await createOrganization(t, 'Production');
    await subscribe(t, b.id);
    const flags = Array.from({ length: 50 }, (_, i) => ({
      key: `big-${String(i).padStart(2, '0')}`,
      name: `Big ${i}`,
      description: null,
      type: 'string',
      value: 'v'.repeat(4000),
      runtime: 'shared',
      archived: false,
    }));
    const body = { flags: [...flags, ...flags.map((flag) => ({ ...flag, key: `${flag.key}-x` }))], keys: flags.map((flag) => flag.key) };
    expect(JSON.stringify(body).length).toBeGreaterThan(256 * 1024);
    const poll = () => request(t.http).get('/v1/flags/config').set(bearer(b.key)).expect(200);
    await poll(); // the payload is cached

    const publish = jest.spyOn(t.app.get(InvalidationBus), 'publish');
    try {
      await importInto(b, body).expect(200);
      expect(publish.mock.calls.filter(([topic]) => topic === 'flags')).toEqual([['flags', b.id]]);
    } finally {
      publish.mockRestore();
    }
    const rebuilds = await queriesDuring(async () => {
      for (let i = 0; i < 3; i += 1) expect((await poll()).body.flags).toHaveLength(50);
    }, /FROM config_versions WHERE organization_id/);
    expect(rebuilds).toBe(1);
    const audit = await t.db.query(`SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1 AND action = 'flag.create'`, [b.id]);
    expect(audit.rows[0].n).toBe(50);
    // Past 2 MB the body is refused before it is read.
    const huge = { flags: Array.from({ length: 600 }, (_, i) => ({ ...flags[0], key: `h${i}` })) };
    expectApiError(await importInto(b, huge), 413, 'PAYLOAD_TOO_LARGE', /2mb/);
  });
});
