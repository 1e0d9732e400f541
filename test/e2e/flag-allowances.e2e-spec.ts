import request from 'supertest';
import { admin, bearer, createOrganization, subscribe } from '../factories/organizations.factory';
import { api, createFlag, flagBody } from '../factories/flags.factory';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TestApp } from '../support/test-app';
import { useTestApp } from '../support/test-suite';

const UNKNOWN_ORG = '00000000-0000-4000-8000-000000000000';
const OPERATOR_LOCKED = /^Flag "\w+" is beyond the limit the operator set for this organization \(\d+ flags\)/;
const PLAN_LOCKED = /beyond the plan's limit.*Subscribe again/;

/** The operator's allowances (decisions.md, "A studio's own deployment (turn 5)"): levels by configuration, one organization's own by the admin API. */
describe('flag allowances the operator sets', () => {
  describe("an organization's own allowance (PATCH /v1/admin/organizations/{orgId} {flagAllowance})", () => {
    const { t, org } = useTestApp();

    async function createFlags(count: number, prefix = 'f') {
      const flags = [];
      for (let i = 0; i < count; i += 1) flags.push(await createFlag(t, org.key, { key: `${prefix}${i}` }));
      return flags;
    }
    const setAllowance = (flagAllowance: unknown) => admin(t).patch(`/organizations/${org.id}`).send({ flagAllowance });
    const quota = async () => (await api(t, org.key).get('/flags/quota').expect(200)).body;

    it('is shown by the admin read-back, null until set, and answered with the quota it makes', async () => {
      const before = await admin(t).get(`/organizations/${org.id}`).expect(200);
      expect(before.body).toMatchObject({ flagAllowance: null, flagQuota: { max: 5, used: 0, subscribed: false, locked: 0 } });

      const set = await setAllowance(200).expect(200);
      expect(set.body).toEqual({
        id: org.id,
        name: 'Test Studio',
        storageAllocation: 1024 ** 3,
        createdAt: expect.any(String),
        flagAllowance: 200,
        flagQuota: { max: 200, used: 0, subscribed: false, locked: 0 },
      });
      const after = await admin(t).get(`/organizations/${org.id}`).expect(200);
      expect(after.body).toMatchObject({ flagAllowance: 200, flagQuota: { max: 200 } });
      const { rows } = await t.db.query('SELECT flag_allowance, storage_allocation::float8 AS bytes FROM organizations WHERE id = $1', [org.id]);
      expect(rows).toEqual([{ flag_allowance: 200, bytes: 1024 ** 3 }]);

      // Each field alone leaves the other as it is.
      await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: 4096 }).expect(200);
      expect((await admin(t).get(`/organizations/${org.id}`).expect(200)).body).toMatchObject({ flagAllowance: 200, storageAllocation: 4096 });
      const back = await setAllowance(null).expect(200);
      expect(back.body).toMatchObject({ flagAllowance: null, storageAllocation: 4096, flagQuota: { max: 5 } });
    });

    it('sets max, and the create 409 names the allowance the operator set', async () => {
      await setAllowance(7).expect(200);
      await createFlags(7);
      expect(await quota()).toEqual({ max: 7, used: 7, subscribed: false, locked: 0 });
      const refused = await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'eighth' }))
        .expect(409);
      expectApiError(refused, 409, 'ALLOWANCE_REACHED', /^Flag allowance reached: this organization may have 7 flags, an allowance the operator set/);
      expect(refused.body.message).not.toMatch(/subscribe/i);
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows[0].n).toBe(7);
    });

    it('applies whatever the subscriptions: lower than the subscribed level, and higher than it', async () => {
      await subscribe(t, org.id);
      await setAllowance(2).expect(200);
      await createFlags(2);
      expect(await quota()).toEqual({ max: 2, used: 2, subscribed: true, locked: 0 });
      await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'third' }))
        .expect(409);
      await setAllowance(10_000).expect(200);
      expect(await quota()).toEqual({ max: 10_000, used: 2, subscribed: true, locked: 0 });
      await setAllowance(null).expect(200);
      expect(await quota()).toEqual({ max: 50, used: 2, subscribed: true, locked: 0 });
    });

    describe('lowered below the flags the organization has', () => {
      let flags: { id: string; key: string }[];
      beforeEach(async () => {
        flags = await createFlags(5);
        await admin(t).patch(`/organizations/${org.id}`).send({ flagAllowance: 3 }).expect(200);
      });

      it('locks the newest beyond it, as the end of a subscription does, archived ones counted', async () => {
        await api(t, org.key).patch(`/flags/${flags[1].id}`).send({ archived: true }).expect(200);
        expect(await quota()).toEqual({ max: 3, used: 5, subscribed: false, locked: 2 });
        const list = await api(t, org.key).get('/flags?includeArchived=true').expect(200);
        const locked = list.body.results.filter((flag: { locked: boolean }) => flag.locked).map((flag: { key: string }) => flag.key);
        expect(locked.sort()).toEqual(['f3', 'f4']);
        expect(list.body.quota).toEqual(await quota());
        expect((await api(t, org.key).get(`/flags/${flags[4].id}`).expect(200)).body.locked).toBe(true);
        expect((await api(t, org.key).get(`/flags/${flags[2].id}`).expect(200)).body.locked).toBe(false);
        // A page holding only some of them ranks each the same.
        const page = await api(t, org.key).get('/flags?includeArchived=true&limit=2&page=1').expect(200);
        expect(page.body.results.map((flag: { key: string; locked: boolean }) => [flag.key, flag.locked])).toEqual([
          ['f4', true],
          ['f3', true],
        ]);
        const next = await api(t, org.key).get('/flags?includeArchived=true&limit=2&page=2').expect(200);
        expect(next.body.results.map((flag: { key: string; locked: boolean }) => [flag.key, flag.locked])).toEqual([
          ['f2', false],
          ['f1', false],
        ]);
      });

      it.each([
        ['name', { name: 'x' }],
        ['value', { type: 'boolean', value: false }],
        ['runtime', { runtime: 'server' }],
      ])("refuses an edit of a locked flag's %s with 403 saying the operator set the limit", async (_field, body) => {
        const response = await api(t, org.key).patch(`/flags/${flags[4].id}`).send(body).expect(403);
        expectApiError(response, 403, 'FLAG_LOCKED', OPERATOR_LOCKED);
        expect(response.body.message).not.toMatch(/subscribe/i);
        const { rows } = await t.db.query('SELECT name, value, runtime FROM flags WHERE id = $1', [flags[4].id]);
        expect(rows[0]).toEqual({ name: 'Flag f4', value: true, runtime: 'shared' });
      });

      it('keeps serving the locked flags and lets them be archived, restored and deleted', async () => {
        const config = await api(t, org.key).get('/flags/config').expect(200);
        expect(config.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
        await api(t, org.key).patch(`/flags/${flags[4].id}`).send({ archived: true }).expect(200);
        await api(t, org.key).patch(`/flags/${flags[4].id}`).send({ archived: false }).expect(200);
        await api(t, org.key).delete(`/flags/${flags[3].id}`).expect(204);
        expect(await quota()).toEqual({ max: 3, used: 4, subscribed: false, locked: 1 });
      });

      it('refuses a locked edit by import with the same reason', async () => {
        const response = await api(t, org.key)
          .post('/flags/import')
          .send({ flags: [{ key: 'f4', name: 'Renamed', type: 'boolean', value: true, runtime: 'shared', archived: false }] })
          .expect(409);
        expect(response.body.refused).toEqual([{ key: 'f4', reason: expect.stringMatching(OPERATOR_LOCKED) }]);
      });

      it('unlocks them when raised, and gives the level back (with its message) on null', async () => {
        await setAllowance(4).expect(200);
        await api(t, org.key).patch(`/flags/${flags[3].id}`).send({ name: 'editable now' }).expect(200);
        await api(t, org.key).patch(`/flags/${flags[4].id}`).send({ name: 'still locked' }).expect(403);
        await setAllowance(5).expect(200);
        await api(t, org.key).patch(`/flags/${flags[4].id}`).send({ name: 'editable too' }).expect(200);
        expect(await quota()).toEqual({ max: 5, used: 5, subscribed: false, locked: 0 });

        await setAllowance(3).expect(200);
        await setAllowance(null).expect(200);
        // Back at the free level (5): nothing locked, and the spec's 409 at the level.
        expect(await quota()).toEqual({ max: 5, used: 5, subscribed: false, locked: 0 });
        const refused = await api(t, org.key)
          .post('/flags')
          .send(flagBody({ key: 'sixth' }))
          .expect(409);
        expect(refused.body.message).toMatch(/at its subscription level; subscribe or delete a flag/);
      });
    });

    it('refuses what is not a whole number from 1 to 10,000 or null with 400 naming flagAllowance, and changes nothing', async () => {
      await setAllowance(9).expect(200);
      for (const flagAllowance of [0, -1, 10_001, 1.5, '5', '', true, [5], { n: 5 }, 1e20]) {
        const response = await setAllowance(flagAllowance).expect(400);
        expectApiError(response, 400, 'VALIDATION_ERROR', /^flagAllowance must be a whole number from 1 to 10000, or null$/);
      }
      const empty = await admin(t).patch(`/organizations/${org.id}`).send({}).expect(400);
      expectApiError(empty, 400, 'VALIDATION_ERROR', /storageAllocation or flagAllowance must be sent/);
      const nullAllocation = await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: null }).expect(400);
      expectApiError(nullAllocation, 400, 'VALIDATION_ERROR', /^storageAllocation must/);
      const unknown = await admin(t).patch(`/organizations/${org.id}`).send({ flagAllowance: 3, flagsAllowed: 3 }).expect(400);
      expectApiError(unknown, 400, 'VALIDATION_ERROR', /property flagsAllowed should not exist/);
      expect((await admin(t).get(`/organizations/${org.id}`).expect(200)).body.flagAllowance).toBe(9);
    });

    it('answers 404 for an unknown organization, 400 for a malformed id, 401 to anyone but the operator', async () => {
      expectApiError(await admin(t).patch(`/organizations/${UNKNOWN_ORG}`).send({ flagAllowance: 3 }).expect(404), 404, 'ORGANIZATION_NOT_FOUND');
      await admin(t).patch('/organizations/not-a-uuid').send({ flagAllowance: 3 }).expect(400);
      await request(t.http).patch(`/v1/admin/organizations/${org.id}`).send({ flagAllowance: 10_000 }).expect(401);
      await request(t.http).patch(`/v1/admin/organizations/${org.id}`).set(bearer(org.key)).send({ flagAllowance: 10_000 }).expect(401);
      expect((await quota()).max).toBe(5);
    });

    it("changes only that organization's allowance", async () => {
      const other = await admin(t).post('/organizations').send({ name: 'Other' }).expect(201);
      await setAllowance(1).expect(200);
      expect((await admin(t).get(`/organizations/${other.body.id}`).expect(200)).body).toMatchObject({ flagAllowance: null, flagQuota: { max: 5 } });
    });

    it('lets exactly the allowance through when creates race with a change of it', async () => {
      await setAllowance(3).expect(200);
      const creates = Array.from({ length: 10 }, (_, i) =>
        api(t, org.key)
          .post('/flags')
          .send(flagBody({ key: `race-${i}` })),
      );
      const [answers] = await Promise.all([Promise.all(creates), setAllowance(6)]);
      const created = answers.filter((answer) => answer.status === 201).length;
      expect(answers.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true);
      // Each create saw the allowance before or after the change, under the organization's lock: never more than 6, at least 3.
      expect(created).toBeGreaterThanOrEqual(3);
      expect(created).toBeLessThanOrEqual(6);
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows[0].n).toBe(created);
      // Then at 6, the rest of the burst fills it exactly.
      const more = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api(t, org.key)
            .post('/flags')
            .send(flagBody({ key: `more-${i}` })),
        ),
      );
      expect(more.filter((answer) => answer.status === 201)).toHaveLength(6 - created);
      expect(await quota()).toEqual({ max: 6, used: 6, subscribed: false, locked: 0 });
    });
  });

  describe('levels from FLAGS_ALLOWED_FREE and FLAGS_ALLOWED_SUBSCRIBED', () => {
    const { t, org } = useTestApp({ env: { FLAGS_ALLOWED_FREE: '2', FLAGS_ALLOWED_SUBSCRIBED: '3' } });

    it("are the quota's max, with the spec's messages and locking at the deployment's levels", async () => {
      await createFlag(t, org.key, { key: 'a' });
      await createFlag(t, org.key, { key: 'b' });
      expect((await api(t, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 2, used: 2, subscribed: false, locked: 0 });
      const refused = await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'c' }))
        .expect(409);
      expectApiError(refused, 409, 'ALLOWANCE_REACHED', /may have 2 flags at its subscription level; subscribe or delete a flag/);

      const subscription = await subscribe(t, org.id);
      const third = await createFlag(t, org.key, { key: 'c' });
      expect((await api(t, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 3, used: 3, subscribed: true, locked: 0 });
      await admin(t).delete(`/organizations/${org.id}/subscriptions/${subscription}`).expect(204);
      expect((await api(t, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 2, used: 3, subscribed: false, locked: 1 });
      const locked = await api(t, org.key).patch(`/flags/${third.id}`).send({ name: 'x' }).expect(403);
      expectApiError(locked, 403, 'FLAG_LOCKED', PLAN_LOCKED);
      expect((await admin(t).get(`/organizations/${org.id}`).expect(200)).body.flagQuota).toEqual({ max: 2, used: 3, subscribed: false, locked: 1 });
    });
  });

  describe('on two instances of one deployment', () => {
    // The decision's bound: the change holds on every instance within a second.
    const WITHIN_MS = 1_000;
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

    it('holds a change made on one instance on the other within 1 s: max, the 409, locking and unlocking', async () => {
      const org = await createOrganization(a);
      const flags: { id: string }[] = [];
      for (const key of ['f0', 'f1', 'f2', 'f3']) flags.push(await createFlag(a, org.key, { key }));
      // The other instance has served this organization (its key cached, its payload built) before the change.
      expect((await api(b, org.key).get('/flags/quota').expect(200)).body.max).toBe(5);
      await api(b, org.key).get('/flags/config').expect(200);

      await admin(a).patch(`/organizations/${org.id}`).send({ flagAllowance: 2 }).expect(200);
      await eventually(async () => (await api(b, org.key).get('/flags/quota')).body.locked === 2, {
        timeoutMs: WITHIN_MS,
        what: 'the other instance locking the flags beyond the lowered allowance',
      });
      expect((await api(b, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 2, used: 4, subscribed: false, locked: 2 });
      const locked = await api(b, org.key).patch(`/flags/${flags[3].id}`).send({ name: 'x' }).expect(403);
      expectApiError(locked, 403, 'FLAG_LOCKED', OPERATOR_LOCKED);
      const refused = await api(b, org.key)
        .post('/flags')
        .send(flagBody({ key: 'f4' }))
        .expect(409);
      expect(refused.body.message).toMatch(/may have 2 flags, an allowance the operator set/);

      await admin(b).patch(`/organizations/${org.id}`).send({ flagAllowance: 10 }).expect(200);
      await eventually(async () => (await api(a, org.key).patch(`/flags/${flags[3].id}`).send({ name: 'editable' })).status === 200, {
        timeoutMs: WITHIN_MS,
        what: 'the first instance unlocking the flags under the raised allowance',
      });
      await createFlag(a, org.key, { key: 'f4' });
      expect((await api(a, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 10, used: 5, subscribed: false, locked: 0 });
    });
  });
});
