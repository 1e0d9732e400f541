import request from 'supertest';
import { FlagScheduler } from '../../src/flags/schedules/flag-scheduler';
import { api, createFlag, storedFlagVersion } from '../factories/flags.factory';
import { bearer } from '../factories/organizations.factory';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { useTestApp } from '../support/test-suite';

type Entry = { id: string; action: string; context?: unknown; after: { value: unknown } | null };

/**
 * A flag's version (decisions.md, "A flag's version"): GET, PATCH and restore answer the flag's ETag (its row version),
 * and PATCH, DELETE and restore take If-Match, answering 412 FLAG_CHANGED when the flag changed since. And why an audit
 * entry was written ("Audit entries say why"): `context` for a restore, a schedule and an import, absent otherwise.
 */
describe("a flag's version: ETag, If-Match and 412", () => {
  const clock = new FakeClock(Date.parse('2026-12-04T12:00:00Z'));
  const { t, org } = useTestApp({ clock });

  const flagPath = (flagId: string) => `/flags/${flagId}`;
  const get = (flagId: string) => api(t, org.key).get(flagPath(flagId)).expect(200);
  const patch = (flagId: string, body: object, ifMatch?: string) => {
    const call = api(t, org.key).patch(flagPath(flagId));
    return (ifMatch === undefined ? call : call.set('If-Match', ifMatch)).send(body);
  };
  const audit = async (flagId: string): Promise<Entry[]> => (await api(t, org.key).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results;

  it('answers the row version as a strong ETag on GET, PATCH and restore; one more after each change, the same after a no-op', async () => {
    const made = await api(t, org.key).post('/flags').send({ key: 'xp-rate', name: 'XP rate', type: 'number', value: 1 }).expect(201);
    expect(made.headers.etag).toBe('"1"');
    const flag = made.body;
    expect((await get(flag.id)).headers.etag).toBe('"1"');
    const changed = await patch(flag.id, { type: 'number', value: 2 }).expect(200);
    expect(changed.headers.etag).toBe('"2"');
    expect((await get(flag.id)).headers.etag).toBe('"2"');
    // A change of any field counts, a no-op does not.
    expect((await patch(flag.id, { description: 'why' }).expect(200)).headers.etag).toBe('"3"');
    const before = await storedFlagVersion(t, flag.id);
    expect((await patch(flag.id, { description: 'why' }, '"3"').expect(200)).headers.etag).toBe('"3"');
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
    const [, , created] = await audit(flag.id);
    const restored = await api(t, org.key).post(`/flags/${flag.id}/restore`).send({ auditEntryId: created.id }).expect(200);
    expect(restored.headers.etag).toBe('"4"');
    expect(restored.body).toMatchObject({ value: 1, description: null });
    // Archiving is a write too.
    expect((await patch(flag.id, { archived: true }).expect(200)).headers.etag).toBe('"5"');
  });

  it('writes a PATCH whose If-Match names the current version (or *), and refuses one naming an older version with 412, writing nothing', async () => {
    const flag = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hi' });
    await patch(flag.id, { type: 'string', value: 'Hello' }, '"1"').expect(200);
    // Someone read version 1 before that change: their save is refused, and the flag keeps what the other wrote.
    const before = await storedFlagVersion(t, flag.id);
    const stale = await patch(flag.id, { type: 'string', value: 'Overwritten' }, '"1"');
    expectApiError(stale, 412, 'FLAG_CHANGED', /^Flag "motd" was changed since you read it .*nothing was written/);
    expect(stale.headers.etag).toBeUndefined();
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
    expect((await get(flag.id)).body).toMatchObject({ value: 'Hello' });
    // A weak tag never matches (If-Match compares strongly); a list matches by any of its tags; * by any version.
    expectApiError(await patch(flag.id, { name: 'x' }, 'W/"2"'), 412, 'FLAG_CHANGED');
    await patch(flag.id, { name: 'Message' }, '"1", "2"').expect(200);
    await patch(flag.id, { name: 'Message of the day' }, '*').expect(200);
    // Without If-Match, as before: the write happens whatever changed since.
    expect((await patch(flag.id, { type: 'string', value: 'Last' }).expect(200)).headers.etag).toBe('"5"');
  });

  it.each([
    ['an unquoted tag', '2'],
    ['an unterminated tag', '"2'],
    ['garbage after a tag', '"2" please'],
    ['an empty list', ' , '],
  ])('answers 400 naming If-Match for %s, and writes nothing', async (_case, header) => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const before = await storedFlagVersion(t, flag.id);
    expectApiError(
      await patch(flag.id, { archived: true }, header),
      400,
      'VALIDATION_ERROR',
      /^If-Match must be \* or a comma-separated list of entity tags/,
    );
    expectApiError(await api(t, org.key).delete(flagPath(flag.id)).set('If-Match', header), 400, 'VALIDATION_ERROR', /^If-Match must be/);
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
  });

  it('lets exactly one of two concurrent PATCHes with the same If-Match win; the other gets 412', async () => {
    const flag = await createFlag(t, org.key, { key: 'gems-price', type: 'number', value: 10 });
    const answers = await Promise.all([
      patch(flag.id, { type: 'number', value: 11 }, '"1"'),
      patch(flag.id, { type: 'number', value: 12 }, '"1"'),
      patch(flag.id, { type: 'number', value: 13 }, '"1"'),
    ]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 412, 412]);
    const winner = answers.find((answer) => answer.status === 200)!;
    expect(winner.headers.etag).toBe('"2"');
    for (const loser of answers.filter((answer) => answer.status === 412)) expectApiError(loser, 412, 'FLAG_CHANGED');
    expect((await get(flag.id)).body.value).toBe(winner.body.value);
    expect((await audit(flag.id)).map((entry) => entry.action)).toEqual(['flag.value.set', 'flag.create']);
  });

  it('takes If-Match on DELETE and restore too: 412 and nothing written when stale, the write when current', async () => {
    const flag = await createFlag(t, org.key, { key: 'k', type: 'number', value: 1 });
    await patch(flag.id, { type: 'number', value: 2 }).expect(200);
    const [, created] = await audit(flag.id);
    const restore = (ifMatch: string) =>
      api(t, org.key).post(`/flags/${flag.id}/restore`).set('If-Match', ifMatch).send({ auditEntryId: created.id });

    expectApiError(await restore('"1"'), 412, 'FLAG_CHANGED');
    expect((await get(flag.id)).body.value).toBe(2);
    const restored = await restore('"2"').expect(200);
    expect(restored.headers.etag).toBe('"3"');
    expect(restored.body.value).toBe(1);

    expectApiError(await api(t, org.key).delete(flagPath(flag.id)).set('If-Match', '"2"'), 412, 'FLAG_CHANGED');
    await get(flag.id);
    await api(t, org.key).delete(flagPath(flag.id)).set('If-Match', '"3"').expect(204);
    await api(t, org.key).get(flagPath(flag.id)).expect(404);
  });

  it('answers 404, not 412, for a flag that is not there', async () => {
    expectApiError(await patch('00000000-0000-4000-8000-000000000000', { name: 'x' }, '"1"'), 404, 'FLAG_NOT_FOUND');
  });

  describe('audit entries say why', () => {
    const HOUR = 3_600_000;

    it('names the entry a restore went back to, and says nothing on ordinary writes (the field is absent)', async () => {
      const flag = await createFlag(t, org.key, { key: 'loot', type: 'json', value: { rare: 1 } });
      await patch(flag.id, { type: 'json', value: { rare: 2 } }).expect(200);
      await patch(flag.id, { archived: true }).expect(200);
      await patch(flag.id, { archived: false }).expect(200);
      const [, , , created] = await audit(flag.id);
      await api(t, org.key).post(`/flags/${flag.id}/restore`).send({ auditEntryId: created.id }).expect(200);
      const [restore, ...ordinary] = await audit(flag.id);
      expect(restore).toMatchObject({ action: 'flag.value.set', context: { restoredFrom: created.id }, after: { value: { rare: 1 } } });
      expect(Object.keys(restore)).toEqual(['id', 'flagId', 'flagKey', 'actorType', 'actorId', 'action', 'before', 'after', 'context', 'createdAt']);
      for (const entry of ordinary)
        expect(Object.keys(entry)).toEqual(['id', 'flagId', 'flagKey', 'actorType', 'actorId', 'action', 'before', 'after', 'createdAt']);
      // The export's lines are the page's entries.
      const lines = (await api(t, org.key).get(`/flags/audit/export?flagId=${flag.id}`).expect(200)).text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines[lines.length - 1].context).toEqual({ restoredFrom: created.id });
      expect(lines[0]).not.toHaveProperty('context');
      const stored = await t.db.query('SELECT context FROM flag_audit_entries WHERE flag_id = $1 ORDER BY created_at, id', [flag.id]);
      expect(stored.rows.map((row) => row.context)).toEqual([null, null, null, null, { restoredFrom: created.id }]);
    });

    it('names the schedule that applied a change', async () => {
      const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: false });
      const made = await api(t, org.key)
        .post(`/flags/${flag.id}/schedules`)
        .send({ at: new Date(clock.now() + HOUR).toISOString(), change: { type: 'boolean', value: true } })
        .expect(201);
      clock.advance(HOUR);
      await t.app.get(FlagScheduler).tick();
      const [applied, created] = await audit(flag.id);
      expect(applied).toMatchObject({ action: 'flag.value.set', actorType: 'system', context: { scheduleId: made.body.id } });
      expect(created).not.toHaveProperty('context');
      expect((await get(flag.id)).headers.etag).toBe('"2"');
    });

    it('says an import made the changes it made', async () => {
      const existing = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hi' });
      const document = {
        flags: [
          { key: 'motd', name: 'Flag motd', description: null, type: 'string', value: 'Hello', runtime: 'shared', archived: false },
          { key: 'gems-price', name: 'Gems', description: null, type: 'number', value: 12, runtime: 'shared', archived: false },
        ],
      };
      await api(t, org.key).post('/flags/import').send(document).expect(200);
      const entries = (await api(t, org.key).get('/flags/audit').expect(200)).body.results as (Entry & { flagKey: string })[];
      expect(entries.map((entry) => [entry.flagKey, entry.action, entry.context])).toEqual([
        ['motd', 'flag.value.set', { import: true }],
        ['gems-price', 'flag.create', { import: true }],
        ['motd', 'flag.create', undefined],
      ]);
      expect((await get(existing.id)).headers.etag).toBe('"2"');
    });
  });

  it('documents the ETag, If-Match, the 412 and the audit context in the OpenAPI document', async () => {
    const doc = (await request(t.http).get('/docs-json').expect(200)).body;
    const operations = {
      get: doc.paths['/v1/flags/{flagId}'].get,
      patch: doc.paths['/v1/flags/{flagId}'].patch,
      delete: doc.paths['/v1/flags/{flagId}'].delete,
      restore: doc.paths['/v1/flags/{flagId}/restore'].post,
    };
    for (const operation of [operations.get, operations.patch, operations.restore]) {
      expect(operation.responses['200'].headers.ETag).toMatchObject({ schema: { type: 'string' } });
    }
    expect(doc.paths['/v1/flags'].post.responses['201'].headers.ETag).toMatchObject({ schema: { type: 'string' } });
    for (const operation of [operations.patch, operations.delete, operations.restore]) {
      expect(operation.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match', in: 'header', required: false }));
      expect(operation.responses['412']).toMatchObject({
        description: expect.stringMatching(/^FLAG_CHANGED/),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiErrorDto' } } },
      });
    }
    expect(operations.get.parameters.map((parameter: { name: string }) => parameter.name)).not.toContain('If-Match');
    const entry = doc.components.schemas.FeatureFlagAuditEntryDto;
    expect(entry.required).not.toContain('context');
    expect(entry.properties.context.allOf).toEqual([{ $ref: '#/components/schemas/FlagAuditContextDto' }]);
    expect(Object.keys(doc.components.schemas.FlagAuditContextDto.properties).sort()).toEqual([
      'changeRequestId',
      'import',
      'override',
      'restoredFrom',
      'scheduleId',
    ]);
  });

  it("keeps a json value's content, not its key order: served equal as JSON, its object keys sorted", async () => {
    // The body as text, so that the order sent is the order on the wire.
    const sent = '{"name":"Spring event","shopDiscount":0.2,"bosses":[{"zone":"b","hp":900},{"zone":"a","hp":100}]}';
    const created = await request(t.http)
      .post('/v1/flags')
      .set(bearer(org.key))
      .set('Content-Type', 'application/json')
      .send(`{"key":"spring","name":"Spring","type":"json","value":${sent}}`)
      .expect(201);
    const served = (await get(created.body.id)).text;
    const value = JSON.parse(served).value;
    expect(value).toEqual(JSON.parse(sent));
    // Objects come back with their keys in the stored form's order (PostgreSQL jsonb: shorter keys first, then bytewise),
    // not the order sent; arrays keep theirs.
    expect(Object.keys(value)).toEqual(['name', 'bosses', 'shopDiscount']);
    expect(value.bosses.map((boss: object) => Object.keys(boss))).toEqual([
      ['hp', 'zone'],
      ['hp', 'zone'],
    ]);
    expect(value.bosses.map((boss: { zone: string }) => boss.zone)).toEqual(['b', 'a']);
    const config = await api(t, org.key).get('/flags/config').expect(200);
    expect(config.body.flags).toEqual([{ key: 'spring', type: 'json', value: JSON.parse(sent), runtime: 'shared' }]);
  });
});
