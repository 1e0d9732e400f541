import { Permission } from '../../src/auth/permission';
import { api, createFlag, storedFlagVersion } from '../factories/flags.factory';
import { admin, createApiKey, createOrganization, subscribe } from '../factories/organizations.factory';
import { expectApiError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

type Entry = { id: string; action: string; actorType: string; actorId: string | null; before: unknown; after: unknown };

/** POST /v1/flags/{flagId}/restore (README, "Live operations"): an ordinary edit by the calling key. */
describe('restoring a flag from its audit log', () => {
  const { t, org } = useTestApp();

  const audit = async (flagId: string): Promise<Entry[]> => (await api(t, org.key).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results;
  const restore = (flagId: string, auditEntryId: unknown, key = org.key) => api(t, key).post(`/flags/${flagId}/restore`).send({ auditEntryId });
  const patch = (flagId: string, body: object) => api(t, org.key).patch(`/flags/${flagId}`).send(body).expect(200);

  it('undoes a bad value change: the flag returns to the entry’s after state, audited as flag.value.set by the key', async () => {
    const flag = await createFlag(t, org.key, { key: 'xp-rate', type: 'number', value: 1.5 });
    await patch(flag.id, { type: 'number', value: 2 });
    await patch(flag.id, { type: 'number', value: 200 }); // the bad change at 3 a.m.
    const good = (await audit(flag.id)).find((entry) => (entry.after as { value: number }).value === 2)!;

    const restored = await restore(flag.id, good.id).expect(200);
    expect(restored.body).toMatchObject({ id: flag.id, key: 'xp-rate', type: 'number', value: 2, archived: false });
    const [latest] = await audit(flag.id);
    expect(latest).toMatchObject({
      action: 'flag.value.set',
      actorType: 'apiKey',
      actorId: org.keyId,
      before: { value: 200 },
      after: { name: 'Flag xp-rate', description: null, type: 'number', value: 2, runtime: 'shared', archived: false },
    });
    const config = await api(t, org.key).get('/flags/config').expect(200);
    expect(config.body.flags).toEqual([{ key: 'xp-rate', type: 'number', value: 2, runtime: 'shared' }]);
  });

  it('restores every field at once, labelled by the most significant change (runtime over value)', async () => {
    const flag = await createFlag(t, org.key, { key: 'k', type: 'string', value: 'a' });
    const [created] = await audit(flag.id);
    await patch(flag.id, { runtime: 'server', type: 'json', value: { b: 1 }, name: 'Renamed', description: 'why' });
    await restore(flag.id, created.id).expect(200);
    const [latest] = await audit(flag.id);
    expect(latest.action).toBe('flag.runtime.set');
    expect(latest.after).toEqual({ name: 'Flag k', description: null, type: 'string', value: 'a', runtime: 'shared', archived: false });
  });

  it('restores an archived state (flag.archive) and back (flag.unarchive), a new value in the same edit', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await patch(flag.id, { archived: true });
    const archived = (await audit(flag.id))[0];
    await patch(flag.id, { archived: false, type: 'boolean', value: false });
    const active = (await audit(flag.id))[0];
    await restore(flag.id, archived.id).expect(200);
    expect((await audit(flag.id))[0].action).toBe('flag.value.set');
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body).toMatchObject({ archived: true, value: true });
    await restore(flag.id, active.id).expect(200);
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body).toMatchObject({ archived: false, value: false });
  });

  it('writes nothing when the flag is already in that state (a no-op)', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const [created] = await audit(flag.id);
    const before = await storedFlagVersion(t, flag.id);
    const answer = await restore(flag.id, created.id).expect(200);
    expect(answer.body).toMatchObject({ value: true, updatedAt: flag.updatedAt });
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
  });

  it('answers 400 for an entry of another flag or organization, alike, and never shows that entry', async () => {
    const flag = await createFlag(t, org.key, { key: 'mine' });
    const sibling = await createFlag(t, org.key, { key: 'sibling', type: 'string', value: 'secret-ish' });
    const [siblingEntry] = await audit(sibling.id);
    const other = await createOrganization(t, 'Other Studio');
    const theirs = await createFlag(t, other.key, { key: 'theirs', type: 'string', value: 'their secret' });
    const [theirEntry] = (await api(t, other.key).get(`/flags/audit?flagId=${theirs.id}`).expect(200)).body.results as Entry[];
    const before = await storedFlagVersion(t, flag.id);

    const answers = [
      await restore(flag.id, siblingEntry.id),
      await restore(flag.id, theirEntry.id),
      await restore(flag.id, '00000000-0000-4000-8000-000000000000'),
    ];
    for (const [index, answer] of answers.entries()) {
      expectApiError(answer, 400, 'AUDIT_ENTRY_NOT_RESTORABLE', /is not an entry of this flag with an after state/);
      expect(JSON.stringify(answer.body)).not.toMatch(/secret|theirs|sibling/);
      // The same words for each, but for the id the caller sent.
      expect(answer.body.message.replace(/auditEntryId \S+/, '')).toBe(answers[0].body.message.replace(/auditEntryId \S+/, ''));
      expect(index).toBeLessThan(3);
    }
    expect(await storedFlagVersion(t, flag.id)).toEqual(before);
  });

  it('answers 400 for a deletion entry, whose after state is null', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const { rows } = await t.db.query(`SELECT id FROM flag_audit_entries WHERE organization_id = $1 AND action = 'flag.delete'`, [org.id]);
    const again = await createFlag(t, org.key, { key: 'k2' });
    // The deletion entry has no flagId any more, and no after state either way.
    expectApiError(await restore(again.id, rows[0].id), 400, 'AUDIT_ENTRY_NOT_RESTORABLE');
    expectApiError(await restore(flag.id, rows[0].id), 404, 'FLAG_NOT_FOUND');
  });

  it('answers 403 on a locked flag, for a value restore, and writes nothing', async () => {
    const subscription = await subscribe(t, org.id);
    const flags = [];
    for (let index = 0; index < 6; index += 1) flags.push(await createFlag(t, org.key, { key: `f${index}` }));
    const locked = flags[5];
    await patch(locked.id, { type: 'boolean', value: false });
    const [created] = (await audit(locked.id)).slice(-1);
    await admin(t).delete(`/organizations/${org.id}/subscriptions/${subscription}`).expect(204);
    const before = await storedFlagVersion(t, locked.id);
    expectApiError(await restore(locked.id, created.id), 403, 'FLAG_LOCKED', /beyond the plan's limit/);
    expect(await storedFlagVersion(t, locked.id)).toEqual(before);
  });

  it('answers 409 when the flag would stay archived with another value', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    await patch(flag.id, { archived: true });
    await patch(flag.id, { archived: false, type: 'boolean', value: false });
    await patch(flag.id, { archived: true });
    const archivedWithTrue = (await audit(flag.id)).find(
      (entry) => entry.action === 'flag.archive' && (entry.after as { value: boolean }).value === true,
    )!;
    expectApiError(await restore(flag.id, archivedWithTrue.id), 409, 'ARCHIVED_FLAG_VALUE');
  });

  it.each([
    ['a malformed auditEntryId', 'not-a-uuid', /auditEntryId must be a valid UUID/],
    ['no auditEntryId', undefined, /auditEntryId must be a valid UUID/],
  ])('answers 400 for %s', async (_case, id, message) => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    expectApiError(await restore(flag.id, id), 400, 'VALIDATION_ERROR', message);
  });

  it('answers 404 for a flag of another organization, 400 for a malformed flagId, 403 without FLAGS_WRITE', async () => {
    const other = await createOrganization(t, 'Other Studio');
    const theirs = await createFlag(t, other.key, { key: 'theirs' });
    const [entry] = (await api(t, other.key).get(`/flags/audit?flagId=${theirs.id}`).expect(200)).body.results as Entry[];
    expectApiError(await restore(theirs.id, entry.id), 404, 'FLAG_NOT_FOUND');
    expectApiError(await restore('nope', entry.id), 400, 'VALIDATION_ERROR', /flagId must be a valid UUID/);
    const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    const flag = await createFlag(t, org.key, { key: 'k' });
    const [created] = await audit(flag.id);
    expectApiError(await restore(flag.id, created.id, reader.key), 403, 'FORBIDDEN');
  });
});
