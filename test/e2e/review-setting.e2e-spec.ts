import request from 'supertest';
import { Client } from 'pg';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { OrganizationEvents } from '../../src/events/organization-events';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TestApp } from '../support/test-app';

const OFF = { required: false, approvals: 1, selfApproval: false };
const ON = { required: true, approvals: 2, selfApproval: false };

/** The review setting (decisions.md, "Change requests (turn 5)"): its routes, its history, and the guard on direct writes. */
describe('the review setting', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let viewer: SignedIn;
  let editor: SignedIn;
  let adminMember: SignedIn;
  let otherAdmin: SignedIn;
  /** FLAGS_READ + FLAGS_WRITE: held to the setting. */
  let writer: string;
  /** FLAGS_READ + FLAGS_WRITE + FLAGS_WRITE_UNREVIEWED: a machine that writes directly. */
  let unreviewed: string;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t, 'Reviewed');
    other = await createOrganization(t, 'Other');
    await subscribe(t, org.id);
    viewer = await memberSignedIn(t, org.id, 'viewer');
    editor = await memberSignedIn(t, org.id, 'editor');
    adminMember = await memberSignedIn(t, org.id, 'admin');
    otherAdmin = await memberSignedIn(t, other.id, 'admin');
    writer = (await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE])).key;
    unreviewed = (await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE, Permission.FLAGS_WRITE_UNREVIEWED])).key;
  });
  afterAll(() => t.close());

  const setReview = (setting: object, who: SignedIn = adminMember, organizationId = org.id) =>
    asSession(t, who, organizationId).put('/organization/review').send(setting);
  const history = async (query = '') => (await asSession(t, viewer, org.id).get(`/organization/review/history${query}`).expect(200)).body;
  const future = () => new Date(Date.now() + 86_400_000).toISOString();
  let keys = 0;
  const newKey = () => `r${++keys}-${Date.now().toString(36)}`;

  describe('routes and callers', () => {
    afterAll(async () => {
      await setReview(OFF).expect(200);
    });

    it('is off by default, for any member; never for a key, an anonymous caller or another organization', async () => {
      for (const who of [viewer, editor, adminMember])
        expect((await asSession(t, who, org.id).get('/organization/review').expect(200)).body).toEqual(OFF);
      expectApiError(await request(t.http).get('/v1/organization/review'), 401, 'UNAUTHORIZED');
      expect((await request(t.http).get('/v1/organization/review').set(bearer(org.key))).status).toBe(403);
      expect((await asSession(t, otherAdmin, org.id).get('/organization/review')).status).toBe(403);
      expect((await asSession(t, otherAdmin, org.id).get('/organization/review/history')).status).toBe(403);
      expect((await request(t.http).get('/v1/organization/review/history')).status).toBe(401);
    });

    it('is changed by admins only, with the CSRF token, never by a key or another organization', async () => {
      expect((await setReview(ON, viewer)).status).toBe(403);
      expect((await setReview(ON, editor)).status).toBe(403);
      expect((await setReview(ON, otherAdmin)).status).toBe(403);
      expect((await asSession(t, adminMember, org.id, { csrf: false }).put('/organization/review').send(ON)).status).toBe(403);
      expect((await request(t.http).put('/v1/organization/review').set(bearer(org.key)).send(ON)).status).toBe(403);
      expect((await request(t.http).put('/v1/organization/review').send(ON)).status).toBe(401);
      // Another organization's admin changes their own, not this one.
      expect((await setReview(ON, otherAdmin, other.id).expect(200)).body).toEqual(ON);
      expect((await asSession(t, viewer, org.id).get('/organization/review').expect(200)).body).toEqual(OFF);
      expect((await history()).total).toBe(0);
      await setReview(OFF, otherAdmin, other.id).expect(200);

      expect((await setReview(ON).expect(200)).body).toEqual(ON);
      expect((await asSession(t, viewer, org.id).get('/organization/review').expect(200)).body).toEqual(ON);
    });

    it.each([
      [{ ...ON, approvals: 0 }, /approvals must be a whole number from 1 to 5/],
      [{ ...ON, approvals: 6 }, /approvals must be a whole number from 1 to 5/],
      [{ ...ON, approvals: 1.5 }, /approvals must be a whole number from 1 to 5/],
      [{ ...ON, approvals: '2' }, /approvals/],
      [{ approvals: 1, selfApproval: false }, /required must be true or false/],
      [{ ...ON, required: 'yes' }, /required must be true or false/],
      [{ required: true, approvals: 1 }, /selfApproval must be true or false/],
      [{ ...ON, extra: 1 }, /extra/],
    ])('refuses %j with 400 naming the field', async (body, message) => {
      expectApiError(await setReview(body), 400, 'VALIDATION_ERROR', message);
    });

    it('appends one history entry per change, none for a PUT that changes nothing, newest first and paged', async () => {
      const before = await history();
      await setReview(ON).expect(200); // the same again
      await setReview({ ...ON, approvals: 3, selfApproval: true }).expect(200);
      await setReview(ON).expect(200);
      const after = await history('?limit=1');
      expect(after.total).toBe(before.total + 2);
      expect(after.totalPages).toBe(after.total);
      expect(after.results).toEqual([
        {
          id: expect.any(String),
          user: { id: adminMember.userId, name: adminMember.body.user.name },
          at: expect.any(String),
          before: { required: true, approvals: 3, selfApproval: true },
          after: ON,
        },
      ]);
      const all = (await history('?limit=100')).results;
      expect(all.at(-1)).toMatchObject({ before: OFF, after: ON });
      expect(all.map((entry: { at: string }) => entry.at)).toEqual([...all.map((entry: { at: string }) => entry.at)].sort().reverse());
      expectApiError(await asSession(t, viewer, org.id).get('/organization/review/history?limit=101'), 400, 'VALIDATION_ERROR', /limit/);
    });

    it('serialises concurrent PUTs: each history entry starts where the one before it ended', async () => {
      const settings = Array.from({ length: 12 }, (_, i) => ({ required: i % 2 === 0, approvals: (i % 5) + 1, selfApproval: i % 3 === 0 }));
      const answers = await Promise.all(settings.map((setting) => setReview(setting).then((response) => response.status)));
      expect(answers.every((status) => status === 200)).toBe(true);
      const entries = [...(await history('?limit=100')).results].reverse();
      for (let i = 1; i < entries.length; i += 1) expect(entries[i].before).toEqual(entries[i - 1].after);
      const now = (await asSession(t, viewer, org.id).get('/organization/review').expect(200)).body;
      expect(entries.at(-1).after).toEqual(now);
      await setReview(ON).expect(200);
    });

    it('keeps the history append-only against the service role itself', async () => {
      const service = new Client({ connectionString: t.databaseUrl });
      await service.connect();
      try {
        await expect(service.query(`UPDATE organization_review_history SET after = before`)).rejects.toThrow(/permission denied/);
        await expect(service.query(`DELETE FROM organization_review_history`)).rejects.toThrow(/permission denied/);
        await expect(service.query(`TRUNCATE organization_review_history`)).rejects.toThrow(/permission denied/);
      } finally {
        await service.end();
      }
      // Not even a superuser rewrites it.
      await expect(t.db.query(`DELETE FROM organization_review_history WHERE organization_id = $1`, [org.id])).rejects.toThrow(/append-only/);
    });

    it('goes with its organization', async () => {
      const doomed = await createOrganization(t, 'Doomed');
      const doomedAdmin = await memberSignedIn(t, doomed.id, 'admin');
      await setReview(ON, doomedAdmin, doomed.id).expect(200);
      // No route removes an organization: its row goes, as an operator would remove it.
      await t.db.query('DELETE FROM organizations WHERE id = $1', [doomed.id]);
      const { rows } = await t.db.query(
        `SELECT (SELECT count(*)::int FROM organization_review_history WHERE organization_id = $1) AS history,
                (SELECT count(*)::int FROM organization_review_settings WHERE organization_id = $1) AS settings`,
        [doomed.id],
      );
      expect(rows[0]).toEqual({ history: 0, settings: 0 });
    });
  });

  describe('API keys and FLAGS_WRITE_UNREVIEWED', () => {
    it('is refused without FLAGS_WRITE, through the admin API and the organization route (400 naming permissions)', async () => {
      expectApiError(
        await admin(t)
          .post(`/organizations/${org.id}/api-keys`)
          .send({ name: 'x', permissions: ['FLAGS_READ', 'FLAGS_WRITE_UNREVIEWED'] }),
        400,
        'VALIDATION_ERROR',
        /permissions: FLAGS_WRITE_UNREVIEWED is only valid beside FLAGS_WRITE/,
      );
      expectApiError(
        await asSession(t, adminMember, org.id)
          .post('/organization/api-keys')
          .send({ name: 'x', permissions: ['FLAGS_WRITE_UNREVIEWED'] }),
        400,
        'VALIDATION_ERROR',
        /permissions/,
      );
      const issued = await asSession(t, adminMember, org.id)
        .post('/organization/api-keys')
        .send({ name: 'ci', permissions: ['FLAGS_WRITE', 'FLAGS_WRITE_UNREVIEWED'] })
        .expect(201);
      expect(issued.body.permissions).toEqual(['FLAGS_WRITE', 'FLAGS_WRITE_UNREVIEWED']);
    });
  });

  describe('the OpenAPI document', () => {
    it('lists FLAGS_WRITE_UNREVIEWED among the permissions and REVIEW_REQUIRED on every guarded write, not on reads', async () => {
      const document = (await request(t.http).get('/docs-json').expect(200)).body;
      expect(document.components.schemas.CreateApiKeyDto.properties.permissions.items.enum).toContain('FLAGS_WRITE_UNREVIEWED');
      const forbidden = (method: string, path: string) => document.paths[path][method].responses['403'].description as string;
      for (const [method, path] of [
        ['post', '/v1/flags'],
        ['patch', '/v1/flags/{flagId}'],
        ['delete', '/v1/flags/{flagId}'],
        ['post', '/v1/flags/{flagId}/restore'],
        ['post', '/v1/flags/import'],
        ['post', '/v1/flags/{flagId}/schedules'],
      ]) {
        expect(forbidden(method, path)).toMatch(/REVIEW_REQUIRED.*POST \/v1\/change-requests/);
      }
      expect(forbidden('get', '/v1/flags')).not.toMatch(/REVIEW_REQUIRED/);
      expect(forbidden('delete', '/v1/flags/{flagId}/schedules/{scheduleId}')).not.toMatch(/REVIEW_REQUIRED/);
    });
  });

  describe('guarded writes', () => {
    let flagId: string;
    let entryId: string;

    beforeAll(async () => {
      await setReview(OFF).expect(200);
      const flag = await createFlag(t, writer, { key: 'guarded', type: 'number', value: 2 });
      flagId = flag.id;
      entryId = (await api(t, writer).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results[0].id;
      await setReview(ON).expect(200);
    });
    afterAll(async () => {
      await setReview(OFF).expect(200);
    });

    const exported = () => ({
      flags: [{ key: 'imported', name: 'I', description: null, type: 'boolean', value: true, runtime: 'shared', archived: false }],
    });
    type Write = [
      string,
      (s: { post: (p: string) => request.Test; patch: (p: string) => request.Test; delete: (p: string) => request.Test }) => request.Test,
    ];
    const writes: Write[] = [
      ['create', (s) => s.post('/flags').send({ key: newKey(), name: 'x', type: 'boolean', value: true })],
      ['PATCH', (s) => s.patch(`/flags/${flagId}`).send({ type: 'number', value: 20 })],
      ['delete', (s) => s.delete(`/flags/${flagId}`)],
      ['restore', (s) => s.post(`/flags/${flagId}/restore`).send({ auditEntryId: entryId })],
      ['import', (s) => s.post('/flags/import').send(exported())],
      ['a new schedule', (s) => s.post(`/flags/${flagId}/schedules`).send({ at: future(), change: { type: 'number', value: 20 } })],
    ];
    const byKey = (key: string) => ({
      post: (p: string) => request(t.http).post(`/v1${p}`).set(bearer(key)),
      patch: (p: string) => request(t.http).patch(`/v1${p}`).set(bearer(key)),
      delete: (p: string) => request(t.http).delete(`/v1${p}`).set(bearer(key)),
    });
    const writtenState = async () =>
      (
        await t.db.query(
          `SELECT (SELECT count(*)::int FROM flags WHERE organization_id = $1) AS flags,
                  (SELECT count(*)::int FROM flag_audit_entries WHERE organization_id = $1) AS entries,
                  (SELECT count(*)::int FROM flag_schedules WHERE organization_id = $1) AS schedules`,
          [org.id],
        )
      ).rows[0];

    it.each(writes)(
      '%s answers 403 REVIEW_REQUIRED to sessions and to keys without FLAGS_WRITE_UNREVIEWED, and writes nothing',
      async (_name, send) => {
        const before = await writtenState();
        for (const caller of [asSession(t, editor, org.id), asSession(t, adminMember, org.id), byKey(writer)]) {
          const response = await send(caller);
          expectApiError(
            { status: response.status, body: { ...response.body, code: undefined } },
            403,
            'REVIEW_REQUIRED',
            /POST \/v1\/change-requests/,
          );
          expect(response.body.code).toBe('REVIEW_REQUIRED');
        }
        expect(await writtenState()).toEqual(before);
      },
    );

    it('lets reads, the poll, OFREP and a dry-run import through', async () => {
      await api(t, writer).get('/flags').expect(200);
      await api(t, writer).get(`/flags/${flagId}`).expect(200);
      await api(t, writer).get('/flags/config').expect(200);
      await request(t.http).post('/ofrep/v1/evaluate/flags/guarded').set(bearer(writer)).send({ context: {} }).expect(200);
      const dry = await api(t, writer)
        .post('/flags/import')
        .send({ ...exported(), dryRun: true })
        .expect(200);
      expect(dry.body.created).toEqual(['imported']);
      await asSession(t, viewer, org.id).get('/flags').expect(200);
    });

    it('lets a key with FLAGS_WRITE_UNREVIEWED write directly, every guarded way', async () => {
      const key = byKey(unreviewed);
      const created = await key.post('/flags').send({ key: newKey(), name: 'direct', type: 'number', value: 1 }).expect(201);
      await key.patch(`/flags/${created.body.id}`).send({ type: 'number', value: 5 }).expect(200);
      const entry = (await api(t, unreviewed).get(`/flags/audit?flagId=${created.body.id}`).expect(200)).body.results.at(-1).id;
      await key.post(`/flags/${created.body.id}/restore`).send({ auditEntryId: entry }).expect(200);
      await key
        .post(`/flags/${created.body.id}/schedules`)
        .send({ at: future(), change: { type: 'number', value: 7 } })
        .expect(201);
      await key.post('/flags/import').send(exported()).expect(200);
      await key.delete(`/flags/${created.body.id}`).expect(204);
    });

    it('is unchanged with review off again, and the history keeps the trace of switching it', async () => {
      await setReview(OFF).expect(200);
      const created = await asSession(t, editor, org.id).post('/flags').send({ key: newKey(), name: 'x', type: 'boolean', value: true }).expect(201);
      await api(t, writer).patch(`/flags/${created.body.id}`).send({ type: 'boolean', value: false }).expect(200);
      await setReview(ON).expect(200);
      const [on, off] = (await history('?limit=2')).results;
      expect([off.after.required, on.after.required]).toEqual([false, true]);
    });
  });

  describe('turning review on', () => {
    it("fails every pending schedule of the organization, and only that organization's", async () => {
      await setReview(OFF).expect(200);
      const flag = await createFlag(t, writer, { key: newKey(), type: 'number', value: 1 });
      const otherFlag = await createFlag(t, other.key, { key: newKey(), type: 'number', value: 1 });
      const mine = await api(t, writer)
        .post(`/flags/${flag.id}/schedules`)
        .send({ at: future(), change: { type: 'number', value: 2 } })
        .expect(201);
      const theirs = await api(t, other.key)
        .post(`/flags/${otherFlag.id}/schedules`)
        .send({ at: future(), change: { type: 'number', value: 2 } })
        .expect(201);

      // Approvals alone leave schedules be; only turning `required` on fails them.
      await setReview({ ...OFF, approvals: 2 }).expect(200);
      expect((await t.db.query('SELECT state FROM flag_schedules WHERE id = $1', [mine.body.id])).rows[0].state).toBe('pending');
      await setReview(ON).expect(200);

      const state = async (id: string) => (await t.db.query('SELECT state, reason FROM flag_schedules WHERE id = $1', [id])).rows[0];
      expect(await state(mine.body.id)).toEqual({ state: 'failed', reason: 'REVIEW_REQUIRED' });
      expect(await state(theirs.body.id)).toEqual({ state: 'pending', reason: null });
      const listed = (await api(t, writer).get(`/flags/${flag.id}/schedules`).expect(200)).body.results[0];
      expect(listed).toMatchObject({ id: mine.body.id, state: 'failed', reason: 'REVIEW_REQUIRED' });
      await setReview(OFF).expect(200);
    });

    it('tells the console streams (review-setting)', async () => {
      const announce = jest.spyOn(t.app.get(OrganizationEvents), 'announce');
      try {
        await setReview(ON).expect(200);
        const [entry] = (await history('?limit=1')).results;
        expect(announce.mock.calls).toEqual([[org.id, { type: 'review-setting', id: entry.id }]]);
        await setReview(ON).expect(200); // no change, no event
        expect(announce).toHaveBeenCalledTimes(1);
      } finally {
        announce.mockRestore();
      }
      await setReview(OFF).expect(200);
    });
  });

  describe('the race between turning review on and direct writes', () => {
    beforeEach(async () => {
      await setReview(OFF).expect(200);
    });
    afterAll(async () => {
      await setReview(OFF).expect(200);
    });

    /** Whether a statement of the test database waits on a lock (the app's PUT, say). */
    const waitingOnALock = async (text: RegExp) => {
      const { rows } = await t.db.query(`SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
      return rows.some((row: { query: string }) => text.test(row.query));
    };

    it('a write admitted under review off commits before the PUT that turns it on: the PUT waits for it', async () => {
      const flag = await createFlag(t, writer, { key: newKey(), type: 'number', value: 1 });
      // Hold the flag's row: the PATCH passes the review check, then waits for the row.
      const holder = new Client({ connectionString: t.adminDatabaseUrl });
      await holder.connect();
      const finished: string[] = [];
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM flags WHERE id = $1 FOR UPDATE', [flag.id]);
        const patch = api(t, writer)
          .patch(`/flags/${flag.id}`)
          .send({ type: 'number', value: 20 })
          .then((response) => {
            finished.push(`patch ${response.status}`);
            return response;
          });
        await eventually(() => waitingOnALock(/FROM flags WHERE/));
        const put = setReview(ON).then((response) => {
          finished.push(`put ${response.status}`);
          return response;
        });
        // The PUT queues behind the admitted write (the organization's row lock), so it cannot answer first.
        await eventually(() => waitingOnALock(/FROM organizations WHERE id = \$1 FOR UPDATE/));
        expect(finished).toEqual([]);
        await holder.query('COMMIT');
        await Promise.all([patch, put]);
        expect(finished).toEqual(['patch 200', 'put 200']);
      } finally {
        await holder.end();
      }
      // And from the PUT's answer on, the same key is refused.
      expect((await api(t, writer).patch(`/flags/${flag.id}`).send({ type: 'number', value: 3 })).status).toBe(403);
    });

    it('a write that arrives while the PUT waits reads the setting the PUT commits: 403, nothing written', async () => {
      const flag = await createFlag(t, writer, { key: newKey(), type: 'number', value: 1 });
      const before = (await t.db.query('SELECT value, version FROM flags WHERE id = $1', [flag.id])).rows[0];
      // Hold the organization's row: the PUT queues first, the PATCH behind it.
      const holder = new Client({ connectionString: t.adminDatabaseUrl });
      await holder.connect();
      const waiters = async () =>
        (await t.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0]
          .n as number;
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [org.id]);
        // supertest sends on then(): start each request now.
        const put = setReview(ON).then((response) => response);
        await eventually(async () => (await waiters()) === 1);
        const patch = api(t, writer)
          .patch(`/flags/${flag.id}`)
          .send({ type: 'number', value: 20 })
          .then((response) => response);
        await eventually(async () => (await waiters()) === 2);
        await holder.query('COMMIT');
        const [putAnswer, patchAnswer] = await Promise.all([put, patch]);
        expect(putAnswer.status).toBe(200);
        expect({ status: patchAnswer.status, code: patchAnswer.body.code }).toEqual({ status: 403, code: 'REVIEW_REQUIRED' });
      } finally {
        await holder.end();
      }
      expect((await t.db.query('SELECT value, version FROM flags WHERE id = $1', [flag.id])).rows[0]).toEqual(before);
    });

    it('a burst of writes against the PUT: none commits after it, and every one after it is refused', async () => {
      const flags = await Promise.all(Array.from({ length: 4 }, () => createFlag(t, writer, { key: newKey(), type: 'number', value: 0 })));
      let putAnsweredAt = 0;
      const outcomes: { status: number; answeredAt: number; sentAfterPut: boolean }[] = [];
      const writesDone = Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const sentAfterPut = putAnsweredAt > 0;
          const response = await api(t, writer)
            .patch(`/flags/${flags[i % flags.length].id}`)
            .send({ type: 'number', value: i + 1 });
          outcomes.push({ status: response.status, answeredAt: Date.now(), sentAfterPut });
        }),
      );
      await setReview(ON).expect(200);
      putAnsweredAt = Date.now();
      await writesDone;
      expect(outcomes.every((outcome) => outcome.status === 200 || outcome.status === 403)).toBe(true);
      // Each accepted PATCH is one audit entry, and each committed before the PUT did (its transaction held the organization lock the PUT needed).
      const accepted = outcomes.filter((outcome) => outcome.status === 200).length;
      const { rows } = await t.db.query(
        `SELECT count(*)::int AS n FROM flag_audit_entries e
         WHERE e.organization_id = $1 AND e.action <> 'flag.create'
           AND e.created_at > (SELECT max(created_at) FROM organization_review_history WHERE organization_id = $1)`,
        [org.id],
      );
      expect(rows[0].n).toBe(0);
      const entries = await t.db.query(
        `SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1 AND action <> 'flag.create' AND flag_id = ANY($2)`,
        [org.id, flags.map((flag) => flag.id)],
      );
      expect(entries.rows[0].n).toBe(accepted);
      for (const outcome of outcomes.filter((o) => o.sentAfterPut)) expect(outcome.status).toBe(403);
    });
  });
});
