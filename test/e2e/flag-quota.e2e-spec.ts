import { admin, subscribe } from '../factories/organizations.factory';
import { api, createFlag, flagBody } from '../factories/flags.factory';
import { useTestApp } from '../support/test-suite';

describe('flag allowance, locking and races', () => {
  const { t, org } = useTestApp();

  async function createFlags(count: number, prefix = 'f') {
    const flags = [];
    for (let i = 0; i < count; i += 1) flags.push(await createFlag(t, org.key, { key: `${prefix}${i}` }));
    return flags;
  }

  it('reports the quota of an organization without a subscription', async () => {
    await createFlags(2);
    const response = await api(t, org.key).get('/flags/quota').expect(200);
    expect(response.body).toEqual({ max: 5, used: 2, subscribed: false, locked: 0 });
  });

  it('refuses the sixth flag without a subscription with 409 and a message', async () => {
    await createFlags(5);
    const response = await api(t, org.key)
      .post('/flags')
      .send(flagBody({ key: 'sixth' }))
      .expect(409);
    expect(response.body).toEqual({ statusCode: 409, error: 'ALLOWANCE_REACHED', message: expect.stringMatching(/allowance/i) });
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
    expect(rows[0].n).toBe(5);
  });

  it('counts archived flags against the allowance', async () => {
    const flags = await createFlags(5);
    await api(t, org.key).patch(`/flags/${flags[0].id}`).send({ archived: true }).expect(200);
    await api(t, org.key)
      .post('/flags')
      .send(flagBody({ key: 'sixth' }))
      .expect(409);
    const quota = await api(t, org.key).get('/flags/quota').expect(200);
    expect(quota.body).toEqual({ max: 5, used: 5, subscribed: false, locked: 0 });
  });

  it('raises the allowance to 50 with any active subscription', async () => {
    await createFlags(5);
    await subscribe(t, org.id, 'storage-only');
    await createFlag(t, org.key, { key: 'sixth' });
    const quota = await api(t, org.key).get('/flags/quota').expect(200);
    expect(quota.body).toEqual({ max: 50, used: 6, subscribed: true, locked: 0 });
  });

  it('stops at 50 flags with a subscription', async () => {
    await subscribe(t, org.id);
    await createFlags(50);
    const response = await api(t, org.key)
      .post('/flags')
      .send(flagBody({ key: 'fifty-one' }))
      .expect(409);
    expect(response.body.error).toBe('ALLOWANCE_REACHED');
  });

  describe('when the subscription ends with more flags than the free allowance', () => {
    let flags: { id: string; key: string }[];

    beforeEach(async () => {
      const subscriptionId = await subscribe(t, org.id);
      flags = await createFlags(7);
      await admin(t).delete(`/organizations/${org.id}/subscriptions/${subscriptionId}`).expect(204);
    });

    it('locks the flags created last, archived ones counted', async () => {
      const quota = await api(t, org.key).get('/flags/quota').expect(200);
      expect(quota.body).toEqual({ max: 5, used: 7, subscribed: false, locked: 2 });
      const list = await api(t, org.key).get('/flags?includeArchived=true').expect(200);
      const locked = list.body.results.filter((flag: { locked: boolean }) => flag.locked).map((flag: { key: string }) => flag.key);
      expect(locked.sort()).toEqual(['f5', 'f6']);
      expect(list.body.quota).toEqual(quota.body);
      const single = await api(t, org.key).get(`/flags/${flags[6].id}`).expect(200);
      expect(single.body.locked).toBe(true);
    });

    it.each([
      ['name', { name: 'x' }],
      ['description', { description: 'x' }],
      ['value', { type: 'boolean', value: false }],
      ['runtime', { runtime: 'server' }],
    ])('refuses to edit the %s of a locked flag with 403 and a message', async (_field, body) => {
      const response = await api(t, org.key).patch(`/flags/${flags[6].id}`).send(body).expect(403);
      expect(response.body).toEqual({ statusCode: 403, error: 'FLAG_LOCKED', message: expect.stringMatching(/beyond the plan's limit/) });
      const { rows } = await t.db.query('SELECT name, value, runtime FROM flags WHERE id = $1', [flags[6].id]);
      expect(rows[0]).toEqual({ name: 'Flag f6', value: true, runtime: 'shared' });
    });

    it('keeps serving locked flags in the config payload', async () => {
      const config = await api(t, org.key).get('/flags/config').expect(200);
      expect(config.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['f0', 'f1', 'f2', 'f3', 'f4', 'f5', 'f6']);
    });

    it('still lets a locked flag be archived, restored and deleted', async () => {
      await api(t, org.key).patch(`/flags/${flags[6].id}`).send({ archived: true }).expect(200);
      await api(t, org.key).patch(`/flags/${flags[6].id}`).send({ archived: false }).expect(200);
      await api(t, org.key).delete(`/flags/${flags[5].id}`).expect(204);
    });

    it('unlocks flags when enough are removed, or on subscribing again', async () => {
      await api(t, org.key).delete(`/flags/${flags[0].id}`).expect(204);
      await api(t, org.key).patch(`/flags/${flags[5].id}`).send({ name: 'editable now' }).expect(200);
      await api(t, org.key).patch(`/flags/${flags[6].id}`).send({ name: 'still locked' }).expect(403);
      await subscribe(t, org.id);
      await api(t, org.key).patch(`/flags/${flags[6].id}`).send({ name: 'editable too' }).expect(200);
      const quota = await api(t, org.key).get('/flags/quota').expect(200);
      expect(quota.body.locked).toBe(0);
    });
  });

  it('lets exactly the allowance through when creates race for the last slots', async () => {
    await createFlags(2);
    const attempts = Array.from({ length: 12 }, (_, i) =>
      api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: `race-${i}` })),
    );
    const statuses = (await Promise.all(attempts)).map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    expect(statuses.filter((status) => status === 409)).toHaveLength(9);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
    expect(rows[0].n).toBe(5);
  });

  it('gives one 201 and one 409 when two creates race for one key', async () => {
    const [first, second] = await Promise.all([
      api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'same', value: true })),
      api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'same', value: false })),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 409]);
    const loser = first.status === 409 ? first : second;
    expect(loser.body.error).toBe('FLAG_KEY_TAKEN');
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1 AND action = 'flag.create'`, [
      org.id,
    ]);
    expect(rows[0].n).toBe(1);
  });
});
