import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { createApiKey, createOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { openSse } from '../support/sse-client';
import { useTestApp } from '../support/test-suite';

const state = (value: unknown, extra: object = {}) => ({
  name: 'XP multiplier',
  description: null,
  type: 'number',
  value,
  runtime: 'shared',
  archived: false,
  ...extra,
});

type Request = {
  id: string;
  state: string;
  changes: { key: string; flagId: string | null; before: unknown; after: unknown; version: number | null }[];
  reviews: { user: { id: string }; decision: string }[];
  timeline: { kind: string; actor: { type: string; id: string | null }; reason?: string; override?: boolean }[];
};

/** Change requests (decisions.md, "Change requests (turn 5)") through HTTP on the real database. */
describe('change requests', () => {
  const { t, org } = useTestApp();
  let author: SignedIn;
  let editor: SignedIn;
  let admin: SignedIn;
  let viewer: SignedIn;

  beforeEach(async () => {
    [author, editor, admin, viewer] = await Promise.all([
      memberSignedIn(t, org.id, 'editor'),
      memberSignedIn(t, org.id, 'editor'),
      memberSignedIn(t, org.id, 'admin'),
      memberSignedIn(t, org.id, 'viewer'),
    ]);
  });

  const as = (who: SignedIn) => asSession(t, who, org.id);
  const open = async (changes: unknown[], who: SignedIn = author, title = 'XP weekend'): Promise<Request> =>
    (await as(who).post('/change-requests').send({ title, changes }).expect(201)).body;
  const approve = (id: string, who: SignedIn = editor) => as(who).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' });
  const flagOf = async (flagId: string) => (await api(t, org.key).get(`/flags/${flagId}`).expect(200)).body;
  const auditOf = async (flagId: string) => (await api(t, org.key).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results;

  describe('opening one', () => {
    it('keeps each flag’s state and version, answers the whole request, and its timeline says who opened it', async () => {
      const flag = await createFlag(t, org.key, { key: 'xp-multiplier', name: 'XP multiplier', type: 'number', value: 1 });
      const response = await as(author)
        .post('/change-requests')
        .send({
          title: 'XP weekend',
          description: 'Double XP',
          changes: [
            { key: 'xp-multiplier', after: state(2) },
            { key: 'new-event', after: state(true, { name: 'New event', type: 'boolean' }) },
          ],
        })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.any(String),
        title: 'XP weekend',
        description: 'Double XP',
        state: 'open',
        author: { type: 'session', id: author.userId, name: author.body.user.name },
        changes: [
          { key: 'xp-multiplier', flagId: flag.id, before: state(1), after: state(2), version: 1 },
          { key: 'new-event', flagId: null, before: null, after: state(true, { name: 'New event', type: 'boolean' }), version: null },
        ],
        reviews: [],
        approvalsNeeded: 1,
        applyAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        appliedAt: null,
        override: null,
        failureReason: null,
        importReport: null,
        timeline: [{ kind: 'opened', actor: { type: 'session', id: author.userId, name: author.body.user.name }, at: expect.any(String) }],
      });
      // Nothing is written until it is applied.
      expect((await flagOf(flag.id)).value).toBe(1);
      expect((await api(t, org.key).get(`/change-requests/${response.body.id}`).expect(200)).body).toEqual(response.body);
    });

    it('is open to a key with FLAGS_WRITE; refused to the anonymous, a viewer, a key without FLAGS_WRITE, and a session without CSRF', async () => {
      const body = { title: 'T', changes: [{ key: 'k', after: state(1) }] };
      const byKey = await api(t, org.key).post('/change-requests').send(body).expect(201);
      expect(byKey.body.author).toEqual({ type: 'apiKey', id: org.keyId, name: expect.any(String) });
      expect((await request(t.http).post('/v1/change-requests').send(body)).status).toBe(401);
      expect((await as(viewer).post('/change-requests').send(body)).status).toBe(403);
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      expect((await api(t, reader.key).post('/change-requests').send(body)).status).toBe(403);
      expect((await asSession(t, author, org.id, { csrf: false }).post('/change-requests').send(body)).status).toBe(403);
    });

    it.each([
      ['no title', { changes: [{ key: 'k', after: null }] }, /title/],
      ['an empty title', { title: '', changes: [{ key: 'k', after: null }] }, /title/],
      ['a title of 201 characters', { title: 'x'.repeat(201), changes: [{ key: 'k', after: null }] }, /title/],
      ['a description of 2,001 characters', { title: 'T', description: 'x'.repeat(2001), changes: [{ key: 'k', after: null }] }, /description/],
      ['no changes', { title: 'T' }, /changes/],
      ['an empty changes list', { title: 'T', changes: [] }, /changes/],
      ['changes not a list', { title: 'T', changes: 'all' }, /changes/],
      ['a change not an object', { title: 'T', changes: [5] }, /changes\[0\] must be an object/],
      ['a bad key', { title: 'T', changes: [{ key: 'Bad Key', after: null }] }, /changes\[0\]\.key/],
      ['an unknown field beside key and after', { title: 'T', changes: [{ key: 'k', after: state(1), extra: 1 }] }, /changes\[0\]: property extra/],
      ['a change without after', { title: 'T', changes: [{ key: 'k' }] }, /changes\[0\] \("k"\)\.after/],
      ['a value not of its type', { title: 'T', changes: [{ key: 'k', after: state('one') }] }, /changes\[0\] \("k"\)\.after: .*value/],
      [
        'an unknown runtime',
        { title: 'T', changes: [{ key: 'k', after: { ...state(1), runtime: 'client' } }] },
        /changes\[0\] \("k"\)\.after: .*runtime/,
      ],
      ['a key inside after', { title: 'T', changes: [{ key: 'k', after: { ...state(1), key: 'other' } }] }, /property key/],
      [
        'a key twice',
        {
          title: 'T',
          changes: [
            { key: 'k', after: state(1) },
            { key: 'k', after: null },
          ],
        },
        /changes\[1\] \("k"\): key "k" is in changes twice/,
      ],
      ['a delete of a key with no flag', { title: 'T', changes: [{ key: 'gone', after: null }] }, /no flag "gone" to delete/],
      ['an applyAt that is no instant', { title: 'T', changes: [{ key: 'k', after: state(1) }], applyAt: 'never' }, /applyAt/],
    ])('refuses %s with a 400 naming the field', async (_case, body, message) => {
      const response = await as(author).post('/change-requests').send(body);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(message);
      expect((await t.db.query('SELECT count(*)::int AS n FROM change_requests WHERE organization_id = $1', [org.id])).rows[0].n).toBe(0);
    });

    it('takes 1,000 changes in one body; 1,001 is a 400 naming changes', async () => {
      const changes = Array.from({ length: 1000 }, (_, index) => ({ key: `flag-${index}`, after: state(index) }));
      const created = await api(t, org.key).post('/change-requests').send({ title: 'Many', changes }).expect(201);
      expect(created.body.changes).toHaveLength(1000);
      const tooMany = await api(t, org.key)
        .post('/change-requests')
        .send({ title: 'Too many', changes: [...changes, { key: 'one-more', after: state(1) }] });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.message).toMatch(/^changes /);
    });

    it('takes bodies up to 2 MB, as the import, on POST and on PATCH; a larger one is a 413', async () => {
      const described = Array.from({ length: 1000 }, (_, index) => ({ key: `flag-${index}`, after: state(index, { description: 'd'.repeat(500) }) }));
      const body = { title: 'Big', changes: described };
      expect(JSON.stringify(body).length).toBeGreaterThan(256 * 1024);
      const created = await api(t, org.key).post('/change-requests').send(body).expect(201);
      await api(t, org.key).patch(`/change-requests/${created.body.id}`).send({ changes: described.slice().reverse() }).expect(200);
      const huge = await api(t, org.key)
        .post('/change-requests')
        .send({ ...body, title: 'x'.repeat(2 * 1024 * 1024) });
      expect(huge.status).toBe(413);
    });
  });

  describe('reading', () => {
    it('lists newest first, by state, awaiting me; another organization never sees them', async () => {
      const first = await open([{ key: 'a', after: state(1) }], author, 'First');
      const second = await open([{ key: 'b', after: state(1) }], author, 'Second');
      await approve(first.id).expect(201);
      const list = await as(viewer).get('/change-requests').expect(200);
      expect(list.body).toMatchObject({ total: 2, page: 1, totalPages: 1 });
      expect(list.body.results.map((entry: { title: string }) => entry.title)).toEqual(['Second', 'First']);
      expect(list.body.results[1]).toMatchObject({ state: 'approved', keys: ['a'], approvals: 1 });
      expect((await as(viewer).get('/change-requests?state=approved').expect(200)).body.results.map((r: { id: string }) => r.id)).toEqual([first.id]);
      expect((await as(editor).get('/change-requests?awaitingMe=true').expect(200)).body.results.map((r: { id: string }) => r.id)).toEqual([
        second.id,
      ]);
      expect((await as(admin).get('/change-requests?awaitingMe=true').expect(200)).body.total).toBe(1);
      expect((await as(author).get('/change-requests?awaitingMe=true').expect(200)).body.total).toBe(0);
      expect((await as(viewer).get('/change-requests?awaitingMe=true').expect(200)).body.total).toBe(0);
      expect((await api(t, org.key).get('/change-requests?awaitingMe=true').expect(200)).body.total).toBe(0);
      expect((await as(viewer).get('/change-requests?state=merged')).status).toBe(400);
      expect((await as(viewer).get('/change-requests?awaitingMe=maybe')).status).toBe(400);
      expect((await as(viewer).get('/change-requests?limit=101')).status).toBe(400);

      const other = await createOrganization(t, 'Other');
      expect((await api(t, other.key).get('/change-requests').expect(200)).body.total).toBe(0);
      expectApiError(await api(t, other.key).get(`/change-requests/${first.id}`), 404, 'CHANGE_REQUEST_NOT_FOUND');
      expectApiError(await api(t, other.key).post(`/change-requests/${first.id}/apply`).send({}), 404, 'CHANGE_REQUEST_NOT_FOUND');
      expectApiError(await api(t, other.key).patch(`/change-requests/${first.id}`).send({ title: 'Mine' }), 404, 'CHANGE_REQUEST_NOT_FOUND');
      expect((await api(t, org.key).get('/change-requests/not-a-uuid')).status).toBe(400);
      expect((await request(t.http).get('/v1/change-requests')).status).toBe(401);
    });
  });

  describe('who may call each route', () => {
    it('the anonymous never; a viewer and a FLAGS_READ key read only; a session change needs its CSRF token', async () => {
      const cr = await open([{ key: 'k', after: state(1) }]);
      const writes: [string, string, object][] = [
        ['post', '/change-requests', { title: 'T', changes: [{ key: 'k', after: state(1) }] }],
        ['patch', `/change-requests/${cr.id}`, { title: 'T2' }],
        ['post', `/change-requests/${cr.id}/reviews`, { decision: 'approve' }],
        ['post', `/change-requests/${cr.id}/withdraw`, {}],
        ['post', `/change-requests/${cr.id}/apply`, {}],
      ];
      const reads = ['/change-requests', `/change-requests/${cr.id}`];
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      for (const path of reads) {
        expect((await request(t.http).get(`/v1${path}`)).status).toBe(401);
        await as(viewer).get(path).expect(200);
        await api(t, reader.key).get(path).expect(200);
      }
      for (const [method, path, body] of writes) {
        expect((await (request(t.http) as unknown as Record<string, (url: string) => request.Test>)[method](`/v1${path}`).send(body)).status).toBe(
          401,
        );
        expect((await (as(viewer) as unknown as Record<string, (url: string) => request.Test>)[method](path).send(body)).status).toBe(403);
        expect((await (api(t, reader.key) as unknown as Record<string, (url: string) => request.Test>)[method](path).send(body)).status).toBe(403);
        const noCsrf = asSession(t, editor, org.id, { csrf: false }) as unknown as Record<string, (url: string) => request.Test>;
        expect((await noCsrf[method](path).send(body)).status).toBe(403);
      }
      expect((await api(t, org.key).get(`/change-requests/${cr.id}`).expect(200)).body).toMatchObject({
        title: 'XP weekend',
        state: 'open',
        reviews: [],
      });
    });
  });

  describe('reviewing', () => {
    it('another editor approves; the author, a key and a viewer may not; once per person per version; any decline declines', async () => {
      await t.db.query(
        `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at) VALUES ($1, false, 2, false, now())`,
        [org.id],
      );
      const cr = await open([{ key: 'k', after: state(1) }]);
      expectApiError(await approve(cr.id, author), 403, 'CHANGE_REQUEST_FORBIDDEN', /author/);
      expectApiError(
        await api(t, org.key).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'approve' }),
        403,
        'CHANGE_REQUEST_FORBIDDEN',
        /keys never review/i,
      );
      expect((await approve(cr.id, viewer)).status).toBe(403);
      const once = await approve(cr.id).expect(201);
      expect(once.body).toMatchObject({ state: 'open', reviews: [{ user: { id: editor.userId }, decision: 'approve', comment: null }] });
      expectApiError(await approve(cr.id), 409, 'CHANGE_REQUEST_ALREADY_REVIEWED');
      const twice = await approve(cr.id, admin).expect(201);
      expect(twice.body.state).toBe('approved');
      const declined = await as(viewer === admin ? editor : admin)
        .post(`/change-requests/${cr.id}/reviews`)
        .send({ decision: 'decline' });
      expectApiError(declined, 409, 'CHANGE_REQUEST_ALREADY_REVIEWED');
      const third = await memberSignedIn(t, org.id, 'editor');
      const no = await as(third).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'decline', comment: 'Not on a Friday' }).expect(201);
      expect(no.body.state).toBe('declined');
      expect(no.body.timeline.map((event: { kind: string }) => event.kind)).toEqual(['opened', 'approved', 'approved', 'declined']);
      expect(no.body.timeline[3]).toMatchObject({ actor: { type: 'session', id: third.userId }, reason: 'Not on a Friday' });
      expectApiError(await approve(cr.id, third), 409, 'CHANGE_REQUEST_NOT_PENDING');
      expect((await as(editor).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'maybe' })).status).toBe(400);
    });

    it('the author approves their own with selfApproval', async () => {
      await t.db.query(
        `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at) VALUES ($1, false, 1, true, now())`,
        [org.id],
      );
      const cr = await open([{ key: 'k', after: state(1) }]);
      expect((await as(author).get('/change-requests?awaitingMe=true').expect(200)).body.results.map((r: { id: string }) => r.id)).toEqual([cr.id]);
      expect((await approve(cr.id, author).expect(201)).body.state).toBe('approved');
      expect((await as(author).get('/change-requests?awaitingMe=true').expect(200)).body.total).toBe(0);
    });
  });

  describe('editing and withdrawing', () => {
    it('an edit by the author replaces, clears the approvals and is in the timeline; others may not; a closed request is not edited', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', name: 'XP multiplier', type: 'number', value: 1 });
      const cr = await open([{ key: 'k', after: state(20) }]);
      await approve(cr.id).expect(201);
      expectApiError(await as(editor).patch(`/change-requests/${cr.id}`).send({ title: 'Mine' }), 403, 'CHANGE_REQUEST_FORBIDDEN');
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 3 }).expect(200);
      const edited = await as(author)
        .patch(`/change-requests/${cr.id}`)
        .send({ title: '2, not 20', changes: [{ key: 'k', after: state(2) }] })
        .expect(200);
      expect(edited.body).toMatchObject({
        title: '2, not 20',
        state: 'open',
        reviews: [],
        changes: [{ key: 'k', flagId: flag.id, before: state(3), after: state(2), version: 2 }],
      });
      expect(edited.body.timeline.map((event: { kind: string }) => event.kind)).toEqual(['opened', 'approved', 'edited']);
      // The same editor may review the new version.
      expect((await approve(cr.id).expect(201)).body.state).toBe('approved');
      expect((await as(author).patch(`/change-requests/${cr.id}`).send({ title: '' })).status).toBe(400);
      expect((await as(author).patch(`/change-requests/${cr.id}`).send({ changes: [] })).status).toBe(400);

      expectApiError(await as(editor).post(`/change-requests/${cr.id}/withdraw`), 403, 'CHANGE_REQUEST_FORBIDDEN');
      const withdrawn = await as(author).post(`/change-requests/${cr.id}/withdraw`).expect(200);
      expect(withdrawn.body.state).toBe('withdrawn');
      expectApiError(await as(author).patch(`/change-requests/${cr.id}`).send({ title: 'Again' }), 409, 'CHANGE_REQUEST_NOT_PENDING');
      expectApiError(await as(author).post(`/change-requests/${cr.id}/withdraw`), 409, 'CHANGE_REQUEST_NOT_PENDING');
    });
  });

  describe('applying', () => {
    it('writes every change in one write by the applier, each audit entry naming the request; the config has them all', async () => {
      const edit = await createFlag(t, org.key, { key: 'xp-multiplier', name: 'XP multiplier', type: 'number', value: 1 });
      const gone = await createFlag(t, org.key, { key: 'old-event' });
      const cr = await open([
        { key: 'xp-multiplier', after: state(2) },
        { key: 'old-event', after: null },
        { key: 'new-event', after: state(true, { name: 'New event', type: 'boolean', rules: undefined }) },
      ]);
      expectApiError(await as(author).post(`/change-requests/${cr.id}/apply`).send({}), 409, 'CHANGE_REQUEST_NOT_APPROVED');
      await approve(cr.id).expect(201);
      expect((await as(viewer).post(`/change-requests/${cr.id}/apply`).send({})).status).toBe(403);
      const applied = await as(editor).post(`/change-requests/${cr.id}/apply`).send({}).expect(200);
      expect(applied.body).toMatchObject({ state: 'applied', appliedAt: expect.any(String), override: null });
      expect(applied.body.timeline.at(-1)).toMatchObject({ kind: 'applied', actor: { type: 'session', id: editor.userId } });

      expect((await flagOf(edit.id)).value).toBe(2);
      expect((await api(t, org.key).get(`/flags/${gone.id}`)).status).toBe(404);
      const config = await api(t, org.key).get('/flags/config').expect(200);
      expect(config.body.flags.map((flag: { key: string }) => flag.key).sort()).toEqual(['new-event', 'xp-multiplier']);
      const entries = (await api(t, org.key).get('/flags/audit?limit=100').expect(200)).body.results.filter(
        (entry: { context?: unknown }) => entry.context !== undefined,
      );
      expect(entries).toHaveLength(3);
      for (const entry of entries) expect(entry).toMatchObject({ actorType: 'session', actorId: editor.userId, context: { changeRequestId: cr.id } });
      expect(entries.map((entry: { action: string }) => entry.action).sort()).toEqual(['flag.create', 'flag.delete', 'flag.value.set']);
      expectApiError(await as(editor).post(`/change-requests/${cr.id}/apply`).send({}), 409, 'CHANGE_REQUEST_NOT_APPROVED');
    });

    it('a key with FLAGS_WRITE applies an approved request (as itself)', async () => {
      const cr = await open([{ key: 'k', after: state(1) }]);
      await approve(cr.id).expect(201);
      await api(t, org.key).post(`/change-requests/${cr.id}/apply`).send({}).expect(200);
      const [entry] = (await api(t, org.key).get('/flags/audit').expect(200)).body.results;
      expect(entry).toMatchObject({ actorType: 'apiKey', actorId: org.keyId, context: { changeRequestId: cr.id } });
    });

    it('is stale when a flag moved on: 409 with the fields, nothing written; an edit refreshes it', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', name: 'XP multiplier', type: 'number', value: 1 });
      const cr = await open([
        { key: 'k', after: state(2) },
        { key: 'fresh', after: state(5) },
      ]);
      await approve(cr.id).expect(201);
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 7, name: 'Renamed' }).expect(200);
      await createFlag(t, org.key, { key: 'fresh', type: 'number', value: 0 });
      const before = await auditOf(flag.id);
      const stale = await as(author).post(`/change-requests/${cr.id}/apply`).send({});
      expect(stale.status).toBe(409);
      expect(stale.body).toEqual({
        statusCode: 409,
        error: 'CHANGE_REQUEST_STALE',
        message: expect.any(String),
        stale: [
          { key: 'k', flagId: flag.id, requestedVersion: 1, currentVersion: 2, fields: ['name', 'value'] },
          { key: 'fresh', flagId: expect.any(String), requestedVersion: null, currentVersion: 1, fields: ['exists'] },
        ],
      });
      expect(await auditOf(flag.id)).toEqual(before);
      expect((await flagOf(flag.id)).value).toBe(7);
      expect((await api(t, org.key).get(`/change-requests/${cr.id}`).expect(200)).body.state).toBe('approved');
    });

    it('is refused by the organization’s rules: 409 with the import’s report, nothing written', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', name: 'XP multiplier', type: 'number', value: 1 });
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
      const cr = await open([
        { key: 'k', after: state(9, { archived: true }) },
        { key: 'other', after: state(1) },
      ]);
      await approve(cr.id).expect(201);
      const before = await auditOf(flag.id);
      const refused = await as(author).post(`/change-requests/${cr.id}/apply`).send({});
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        statusCode: 409,
        error: 'CHANGE_REQUEST_REFUSED',
        message: expect.any(String),
        created: ['other'],
        updated: [],
        unchanged: [],
        refused: [{ key: 'k', reason: expect.stringMatching(/archived/) }],
      });
      expect(await auditOf(flag.id)).toEqual(before);
      expect((await api(t, org.key).get('/flags/config').expect(200)).body.flags).toEqual([]);
    });

    it('an admin applies an open request without approvals, giving a reason: in every audit entry and the timeline', async () => {
      const cr = await open([
        { key: 'a', after: state(1) },
        { key: 'b', after: state(2) },
      ]);
      expectApiError(
        await as(editor)
          .post(`/change-requests/${cr.id}/apply`)
          .send({ override: { reason: 'now' } }),
        403,
        'CHANGE_REQUEST_FORBIDDEN',
      );
      expect(
        (
          await api(t, org.key)
            .post(`/change-requests/${cr.id}/apply`)
            .send({ override: { reason: 'now' } })
        ).status,
      ).toBe(403);
      expect(
        (
          await as(admin)
            .post(`/change-requests/${cr.id}/apply`)
            .send({ override: { reason: '' } })
        ).status,
      ).toBe(400);
      expect(
        (
          await as(admin)
            .post(`/change-requests/${cr.id}/apply`)
            .send({ override: { reason: 'x'.repeat(501) } })
        ).status,
      ).toBe(400);
      expect((await as(admin).post(`/change-requests/${cr.id}/apply`).send({ override: 'now' })).status).toBe(400);
      const reason = 'XP at 20 in production, 3 a.m.';
      const applied = await as(admin).post(`/change-requests/${cr.id}/apply`).send({ override: { reason } }).expect(200);
      expect(applied.body).toMatchObject({ state: 'applied', override: { reason } });
      expect(applied.body.timeline.at(-1)).toMatchObject({ kind: 'applied', actor: { id: admin.userId }, reason, override: true });
      const entries = (await api(t, org.key).get('/flags/audit').expect(200)).body.results;
      expect(entries).toHaveLength(2);
      for (const entry of entries) expect(entry.context).toEqual({ changeRequestId: cr.id, override: { reason } });
    });
  });

  describe('made of an import (requestReview: true)', () => {
    it('changes nothing and answers 201 with the request of what the import would change, its dry-run report attached', async () => {
      const same = await createFlag(t, org.key, { key: 'same', name: 'XP multiplier', type: 'number', value: 1 });
      const edit = await createFlag(t, org.key, { key: 'edit', name: 'XP multiplier', type: 'number', value: 1 });
      const flags = [
        { key: 'same', ...state(1) },
        { key: 'edit', ...state(2) },
        { key: 'fresh', ...state(3) },
      ];
      const response = await as(author).post('/flags/import').send({ flags, requestReview: true, title: 'Promote from staging' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        title: 'Promote from staging',
        state: 'open',
        author: { type: 'session', id: author.userId },
        changes: [
          { key: 'edit', flagId: edit.id, before: state(1), after: state(2), version: 1 },
          { key: 'fresh', flagId: null, before: null, after: state(3), version: null },
        ],
        importReport: { created: ['fresh'], updated: [{ key: 'edit', before: state(1), after: state(2) }], unchanged: ['same'], refused: [] },
      });
      expect((await flagOf(edit.id)).value).toBe(2 - 1);
      expect(await auditOf(same.id)).toHaveLength(1);
      expect((await api(t, org.key).get('/flags/config').expect(200)).body.flags).toHaveLength(2);

      await approve(response.body.id).expect(201);
      await as(author).post(`/change-requests/${response.body.id}/apply`).send({}).expect(200);
      expect((await flagOf(edit.id)).value).toBe(2);
      const [entry] = await auditOf(edit.id);
      expect(entry.context).toEqual({ changeRequestId: response.body.id });
    });

    it('refuses requestReview with dryRun, a title without requestReview, and an import that changes nothing', async () => {
      await createFlag(t, org.key, { key: 'same', name: 'XP multiplier', type: 'number', value: 1 });
      const flags = [{ key: 'same', ...state(1) }];
      const both = await as(author).post('/flags/import').send({ flags, requestReview: true, dryRun: true });
      expect(both.status).toBe(400);
      expect(both.body.message).toMatch(/requestReview/);
      const titled = await as(author).post('/flags/import').send({ flags, title: 'T' });
      expect(titled.status).toBe(400);
      expect(titled.body.message).toMatch(/title/);
      const nothing = await as(author).post('/flags/import').send({ flags, requestReview: true });
      expect(nothing.status).toBe(400);
      expect(nothing.body.message).toMatch(/^flags: /);
      expect((await as(viewer).post('/flags/import').send({ flags, requestReview: true })).status).toBe(403);
      expect((await t.db.query('SELECT count(*)::int AS n FROM change_requests WHERE organization_id = $1', [org.id])).rows[0].n).toBe(0);
    });
  });

  describe('with review required (the way through)', () => {
    it('direct writes are refused while requests open, are approved (two approvals) and apply; an import becomes a request', async () => {
      const flag = await createFlag(t, org.key, { key: 'xp', name: 'XP multiplier', type: 'number', value: 1 });
      await as(admin).put('/organization/review').send({ required: true, approvals: 2, selfApproval: false }).expect(200);
      const { key } = await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE]);
      const direct = await api(t, key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 20 });
      expect(direct.status).toBe(403);
      expect(direct.body.error).toBe('REVIEW_REQUIRED');

      // A key without FLAGS_WRITE_UNREVIEWED may still open a request.
      const byKey = (
        await api(t, key)
          .post('/change-requests')
          .send({ title: 'XP 2', changes: [{ key: 'xp', after: state(2) }] })
          .expect(201)
      ).body;
      expect(byKey.approvalsNeeded).toBe(2);
      expectApiError(await as(author).post(`/change-requests/${byKey.id}/apply`).send({}), 409, 'CHANGE_REQUEST_NOT_APPROVED');
      expect((await approve(byKey.id, editor).expect(201)).body.state).toBe('open');
      expect((await approve(byKey.id, admin).expect(201)).body.state).toBe('approved');
      await as(author).post(`/change-requests/${byKey.id}/apply`).send({}).expect(200);
      expect((await flagOf(flag.id)).value).toBe(2);

      const imported = await api(t, key)
        .post('/flags/import')
        .send({ flags: [{ key: 'xp', ...state(3) }], requestReview: true });
      expect(imported.status).toBe(201);
      expect(imported.body.changes).toEqual([{ key: 'xp', flagId: flag.id, before: state(2), after: state(3), version: 2 }]);
      expect(
        (
          await api(t, key)
            .post('/flags/import')
            .send({ flags: [{ key: 'xp', ...state(3) }] })
        ).status,
      ).toBe(403);
      expect((await flagOf(flag.id)).value).toBe(2);
    });
  });

  describe('the event stream', () => {
    it('tells the organization’s consoles of every change of a request, with its id', async () => {
      const stream = await openSse(`${t.config.urls.baseUrl}/events?organizationId=${org.id}`, { Cookie: viewer.cookie });
      try {
        const ofRequests = () => stream.blocks.filter((block) => block.event === 'change-requests');
        const cr = await open([{ key: 'k', after: state(1) }]);
        await stream.next(() => ofRequests().length === 1, 1_000);
        await approve(cr.id).expect(201);
        await stream.next(() => ofRequests().length === 2, 1_000);
        await as(author).post(`/change-requests/${cr.id}/apply`).send({}).expect(200);
        await stream.next(() => ofRequests().length === 3, 1_000);
        const imported = await as(author)
          .post('/flags/import')
          .send({ flags: [{ key: 'imported', ...state(1) }], requestReview: true })
          .expect(201);
        await stream.next(() => ofRequests().length === 4, 1_000);
        expect(ofRequests().map((block) => JSON.parse(block.data!))).toEqual([
          { ids: [cr.id] },
          { ids: [cr.id] },
          { ids: [cr.id] },
          { ids: [imported.body.id] },
        ]);
      } finally {
        stream.close();
      }
    });
  });

  describe('races', () => {
    it('two concurrent applies: one applies, the other is a 409, and each flag is written once', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', name: 'XP multiplier', type: 'number', value: 1 });
      const cr = await open([{ key: 'k', after: state(2) }]);
      await approve(cr.id).expect(201);
      const answers = await Promise.all([
        as(author).post(`/change-requests/${cr.id}/apply`).send({}),
        as(editor).post(`/change-requests/${cr.id}/apply`).send({}),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(answers.find((answer) => answer.status === 409)!.body.error).toBe('CHANGE_REQUEST_NOT_APPROVED');
      expect((await auditOf(flag.id)).filter((entry: { context?: unknown }) => entry.context !== undefined)).toHaveLength(1);
    });

    it('a review while the request is edited: the review counts for the version it was given on, never the new one', async () => {
      const cr = await open([{ key: 'k', after: state(1) }]);
      const [edit, review] = await Promise.all([
        as(author)
          .patch(`/change-requests/${cr.id}`)
          .send({ changes: [{ key: 'k', after: state(20) }] }),
        approve(cr.id),
      ]);
      expect(edit.status).toBe(200);
      expect(review.status).toBe(201);
      const now: Request = (await api(t, org.key).get(`/change-requests/${cr.id}`).expect(200)).body;
      const kinds = now.timeline.map((event) => event.kind);
      // Whichever went first, the request as it stands (20) is approved only if the approval came after the edit.
      if (kinds.indexOf('edited') < kinds.indexOf('approved')) expect(now).toMatchObject({ state: 'approved', reviews: [{ decision: 'approve' }] });
      else expect(now).toMatchObject({ state: 'open', reviews: [] });
      expect(now.changes[0].after).toEqual(state(20));
    });

    it('an apply against a flag edited meanwhile by a key with FLAGS_WRITE_UNREVIEWED (review on): stale or applied before it, never a lost update', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', name: 'XP multiplier', type: 'number', value: 1 });
      await as(admin).put('/organization/review').send({ required: true, approvals: 1, selfApproval: false }).expect(200);
      const unreviewed = await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE, Permission.FLAGS_WRITE_UNREVIEWED]);
      const cr = await open([{ key: 'k', after: state(2) }]);
      await approve(cr.id).expect(201);
      const [apply, edit] = await Promise.all([
        as(author).post(`/change-requests/${cr.id}/apply`).send({}),
        api(t, unreviewed.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 5 }),
      ]);
      expect(edit.status).toBe(200);
      const value = (await flagOf(flag.id)).value;
      if (apply.status === 200)
        expect(value).toBe(5); // the apply went first; the edit came after it
      else {
        expect(apply.status).toBe(409);
        expect(apply.body).toMatchObject({
          error: 'CHANGE_REQUEST_STALE',
          stale: [{ key: 'k', fields: ['value'], requestedVersion: 1, currentVersion: 2 }],
        });
        expect(value).toBe(5);
        expect((await auditOf(flag.id)).some((entry: { context?: unknown }) => entry.context !== undefined)).toBe(false);
      }
    });
  });
});
