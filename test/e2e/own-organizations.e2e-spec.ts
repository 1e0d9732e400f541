import request from 'supertest';
import { bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, memberSignedIn, signIn, SignedIn } from '../factories/people.factory';
import { bytes, signedUrl, uploadFile } from '../factories/storage.factory';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Organizations made by the people who use them (decisions.md, "A studio's own deployment"): POST /v1/organizations
 * under each ORGANIZATION_CREATION mode and ORGANIZATIONS_PER_USER, the copy of members, and PATCH / DELETE
 * /v1/organization for admins, through HTTP on PostgreSQL.
 */
describe('organizations made by their people', () => {
  let t: TestApp;
  let anyone: TestApp;
  let off: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    // Other deployments' settings on the same database: the rules are read from each app's configuration.
    anyone = await createTestApp({ ORGANIZATION_CREATION: 'anyone', ORGANIZATIONS_PER_USER: '3' }, { sameDatabaseAs: t });
    off = await createTestApp({ ORGANIZATION_CREATION: 'off' }, { sameDatabaseAs: t });
  });
  afterAll(async () => {
    await off?.close();
    await anyone?.close();
    await t?.close();
  });

  const session = (app: TestApp, who: SignedIn) => request(app.http).get('/v1/auth/session').set('Cookie', who.cookie).expect(200);
  const createdBy = async (userId: string) =>
    Number((await t.db.query('SELECT count(*) FROM organizations WHERE created_by = $1', [userId])).rows[0].count);

  /** A signed-in admin of a fresh organization (made by the admin API). */
  async function adminOfNewOrganization(app: TestApp = t): Promise<{ org: TestOrganization; who: SignedIn }> {
    const org = await createOrganization(t, 'Acme Games (production)');
    const who = await memberSignedIn(app, org.id, 'admin');
    return { org, who };
  }

  describe('POST /v1/organizations', () => {
    it('makes the caller admin of a new organization that starts as the admin API starts one (free allowance, no subscription)', async () => {
      const { who } = await adminOfNewOrganization();
      const response = await asSession(t, who).post('/organizations').send({ name: 'Acme Games (staging)' }).expect(201);
      expect(response.body).toEqual({ id: expect.any(String), name: 'Acme Games (staging)', role: 'admin' });
      const id = response.body.id as string;

      const stored = (await t.db.query('SELECT name, storage_allocation, created_by FROM organizations WHERE id = $1', [id])).rows[0];
      expect(stored).toEqual({
        name: 'Acme Games (staging)',
        storage_allocation: String(t.config.storage.defaultAllocationBytes),
        created_by: who.userId,
      });
      expect((await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE organization_id = $1', [id])).rows[0].n).toBe(0);
      const members = (await t.db.query('SELECT user_id, role FROM memberships WHERE organization_id = $1', [id])).rows;
      expect(members).toEqual([{ user_id: who.userId, role: 'admin' }]);

      // The same session works in it at once: the switcher lists it, the quota is the free level's, flags can be made.
      const body = (await session(t, who)).body;
      expect(body.organizations).toContainEqual({ id, name: 'Acme Games (staging)', role: 'admin' });
      expect(body.organizationCreation).toEqual({ allowed: true, reason: null, created: 1, limit: 20 });
      const quota = await asSession(t, who, id).get('/flags/quota').expect(200);
      expect(quota.body).toMatchObject({ max: 5, used: 0 });
      await asSession(t, who, id).post('/flags').send({ key: 'motd', name: 'Motd', type: 'string', value: 'hi' }).expect(201);
    });

    it('copies the members and roles of an organization the caller administers, in one step, and their sessions see it', async () => {
      const { org, who } = await adminOfNewOrganization();
      const editor = await memberSignedIn(t, org.id, 'editor');
      const viewer = await memberSignedIn(t, org.id, 'viewer');
      const former = await memberSignedIn(t, org.id, 'viewer');
      await asSession(t, who, org.id).delete(`/organization/members/${former.userId}`).expect(204);
      // Another instance of the deployment learns of it within a second (its cached sessions re-read).
      await session(anyone, editor);

      const created = await asSession(t, who).post('/organizations').send({ name: 'Acme Games (staging)', copyMembersFrom: org.id }).expect(201);
      const id = created.body.id as string;
      const members = await asSession(t, who, id).get('/organization/members').expect(200);
      expect(members.body.members.map((m: { userId: string; role: string }) => [m.userId, m.role]).sort()).toEqual(
        [
          [who.userId, 'admin'],
          [editor.userId, 'editor'],
          [viewer.userId, 'viewer'],
        ].sort(),
      );
      // Nobody signed in again or typed a password: their live sessions list the organization with their role.
      expect((await session(t, editor)).body.organizations).toContainEqual({ id, name: 'Acme Games (staging)', role: 'editor' });
      await asSession(t, viewer, id).get('/flags').expect(200);
      await asSession(t, viewer, id).post('/flags').send({ key: 'nope', name: 'x', type: 'boolean', value: true }).expect(403);
      await asSession(t, former, id).get('/flags').expect(403);
      await eventually(async () => (await asSession(anyone, editor, id).get('/flags')).status === 200, {
        timeoutMs: 1_500,
        what: 'the other instance sees the copied membership',
      });
    });

    it('refuses copyMembersFrom of an organization the caller does not administer with one answer, whether it exists or not', async () => {
      const { org, who } = await adminOfNewOrganization();
      const other = await createOrganization(t, 'Someone else');
      const editorThere = await createOrganization(t, 'Editor there');
      await addMember(t, editorThere.id, who.userId, 'editor');
      const answers = [];
      for (const source of [other.id, editorThere.id, '00000000-0000-4000-8000-000000000000']) {
        answers.push(await asSession(t, who).post('/organizations').send({ name: 'Copy', copyMembersFrom: source }));
      }
      for (const answer of answers) expectApiError(answer, 403, 'COPY_MEMBERS_FORBIDDEN', /copyMembersFrom must name an organization you administer/);
      expect(new Set(answers.map((answer) => answer.body.message)).size).toBe(1);
      expect(await createdBy(who.userId)).toBe(0);
      // A malformed id names the field.
      expectApiError(
        await asSession(t, who).post('/organizations').send({ name: 'Copy', copyMembersFrom: 'acme' }),
        400,
        'VALIDATION_ERROR',
        /copyMembersFrom/,
      );
      // Its own organization works.
      await asSession(t, who).post('/organizations').send({ name: 'Copy', copyMembersFrom: org.id }).expect(201);
    });

    it('refuses bad names, naming the field, and unknown fields', async () => {
      const { who } = await adminOfNewOrganization();
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 7 }]) {
        expectApiError(await asSession(t, who).post('/organizations').send(body), 400, 'VALIDATION_ERROR', /name/);
      }
      expectApiError(await asSession(t, who).post('/organizations').send({ name: 'ok', plan: 'pro' }), 400, 'VALIDATION_ERROR', /plan/);
      expect(await createdBy(who.userId)).toBe(0);
    });

    it('takes a session only: anonymous and API keys get 401, a session without its CSRF token 403', async () => {
      const { org, who } = await adminOfNewOrganization();
      await request(t.http).post('/v1/organizations').send({ name: 'Anon' }).expect(401);
      const withKey = await request(t.http).post('/v1/organizations').set(bearer(org.key)).send({ name: 'Key' });
      expectApiError(withKey, 401, 'UNAUTHORIZED');
      expectApiError(await asSession(t, who, undefined, { csrf: false }).post('/organizations').send({ name: 'No CSRF' }), 403, 'CSRF_TOKEN_INVALID');
      expect(await createdBy(who.userId)).toBe(0);
      expect((await t.db.query(`SELECT count(*)::int AS n FROM organizations WHERE name IN ('Anon', 'Key', 'No CSRF')`)).rows[0].n).toBe(0);
    });

    it('admins (the default): a user who administers no organization is refused, and the session body says why', async () => {
      const org = await createOrganization(t);
      const editor = await memberSignedIn(t, org.id, 'editor');
      expectApiError(await asSession(t, editor).post('/organizations').send({ name: 'Mine' }), 403, 'ORGANIZATION_CREATION_ADMINS_ONLY');
      expect((await session(t, editor)).body.organizationCreation).toEqual({
        allowed: false,
        reason: 'ORGANIZATION_CREATION_ADMINS_ONLY',
        created: 0,
        limit: 20,
      });
      // A user with no organization at all neither.
      const loner = await createUser(t);
      const lonerSession = await signIn(t, loner.email);
      expectApiError(await asSession(t, lonerSession).post('/organizations').send({ name: 'Mine' }), 403, 'ORGANIZATION_CREATION_ADMINS_ONLY');
    });

    it('anyone: any signed-in user may, even with no organization yet', async () => {
      const loner = await createUser(t);
      const who = await signIn(anyone, loner.email);
      expect(who.body).toMatchObject({ organizations: [], organizationCreation: { allowed: true, reason: null, created: 0, limit: 3 } });
      await asSession(anyone, who).post('/organizations').send({ name: 'Solo' }).expect(201);
    });

    it('off: nobody may (403 ORGANIZATION_CREATION_OFF), admins included; the admin API still creates', async () => {
      const { who } = await adminOfNewOrganization(off);
      expectApiError(
        await asSession(off, who).post('/organizations').send({ name: 'Mine' }),
        403,
        'ORGANIZATION_CREATION_OFF',
        /ORGANIZATION_CREATION=off/,
      );
      expect((await session(off, who)).body.organizationCreation).toMatchObject({ allowed: false, reason: 'ORGANIZATION_CREATION_OFF' });
      expect(await createdBy(who.userId)).toBe(0);
    });

    it('ORGANIZATIONS_PER_USER holds under a burst: exactly the allowed number succeed, and a delete frees a place', async () => {
      const loner = await createUser(t);
      const who = await signIn(anyone, loner.email);
      await asSession(anyone, who).post('/organizations').send({ name: 'First' }).expect(201);
      const burst = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          asSession(anyone, who)
            .post('/organizations')
            .send({ name: `Burst ${index}` }),
        ),
      );
      const statuses = burst.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 201, 403, 403, 403, 403, 403, 403]);
      for (const refused of burst.filter((response) => response.status === 403))
        expectApiError(refused, 403, 'ORGANIZATION_LIMIT', /3 organizations/);
      expect(await createdBy(who.userId)).toBe(3);
      expect((await session(anyone, who)).body.organizationCreation).toEqual({ allowed: false, reason: 'ORGANIZATION_LIMIT', created: 3, limit: 3 });

      const one = burst.find((response) => response.status === 201)!.body.id as string;
      await asSession(anyone, who, one).delete('/organization').expect(204);
      expect((await session(anyone, who)).body.organizationCreation).toMatchObject({ allowed: true, created: 2 });
      await asSession(anyone, who).post('/organizations').send({ name: 'Again' }).expect(201);
    });
  });

  describe('PATCH /v1/organization', () => {
    it('admins rename it; every member sees the new name', async () => {
      const { org, who } = await adminOfNewOrganization();
      const viewer = await memberSignedIn(t, org.id, 'viewer');
      const renamed = await asSession(t, who, org.id).patch('/organization').send({ name: 'Acme Games (live)' }).expect(200);
      expect(renamed.body).toEqual({ id: org.id, name: 'Acme Games (live)', role: 'admin' });
      expect((await session(t, viewer)).body.organizations).toEqual([{ id: org.id, name: 'Acme Games (live)', role: 'viewer' }]);
      expect((await t.db.query('SELECT name FROM organizations WHERE id = $1', [org.id])).rows[0].name).toBe('Acme Games (live)');
    });

    it('refuses editors, viewers, API keys, a missing CSRF token, another organization and bad names', async () => {
      const { org, who } = await adminOfNewOrganization();
      const other = await createOrganization(t, 'Someone else');
      for (const role of ['editor', 'viewer'] as const) {
        const member = await memberSignedIn(t, org.id, role);
        expect((await asSession(t, member, org.id).patch('/organization').send({ name: 'Mine' })).status).toBe(403);
      }
      expect((await request(t.http).patch('/v1/organization').set(bearer(org.key)).send({ name: 'Mine' })).status).toBe(403);
      expectApiError(await asSession(t, who, org.id, { csrf: false }).patch('/organization').send({ name: 'Mine' }), 403, 'CSRF_TOKEN_INVALID');
      expect((await asSession(t, who, other.id).patch('/organization').send({ name: 'Mine' })).status).toBe(403);
      await request(t.http).patch('/v1/organization').send({ name: 'Mine' }).expect(401);
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }]) {
        expectApiError(await asSession(t, who, org.id).patch('/organization').send(body), 400, 'VALIDATION_ERROR', /name/);
      }
      const names = (await t.db.query('SELECT name FROM organizations WHERE id = ANY($1)', [[org.id, other.id]])).rows.map((row) => row.name).sort();
      expect(names).toEqual(['Acme Games (production)', 'Someone else']);
    });
  });

  describe('DELETE /v1/organization', () => {
    /** A new organization made by `who` through the API, with a key of its own (issued by its admin). */
    async function ownOrganization(who: SignedIn): Promise<TestOrganization> {
      const created = await asSession(t, who).post('/organizations').send({ name: 'Scratch' }).expect(201);
      const key = await asSession(t, who, created.body.id)
        .post('/organization/api-keys')
        .send({ name: 'everything', permissions: ['FLAGS_READ', 'FLAGS_WRITE', 'STORAGE_READ', 'STORAGE_WRITE'] })
        .expect(201);
      return { id: created.body.id, key: key.body.key, keyId: key.body.id };
    }

    it('answers 409 ORGANIZATION_NOT_EMPTY while it has flags (archived too) or files (uploads in progress too), then deletes it all', async () => {
      const { org: home, who } = await adminOfNewOrganization();
      const org = await ownOrganization(who);
      const viewer = await memberSignedIn(t, org.id, 'viewer');
      await addMember(t, home.id, viewer.userId, 'viewer');

      const flag = await request(t.http)
        .post('/v1/flags')
        .set(bearer(org.key))
        .send({ key: 'motd', name: 'Motd', type: 'string', value: 'hi' })
        .expect(201);
      await request(t.http).patch(`/v1/flags/${flag.body.id}`).set(bearer(org.key)).send({ archived: true }).expect(200);
      expectApiError(await asSession(t, who, org.id).delete('/organization'), 409, 'ORGANIZATION_NOT_EMPTY', /still has 1 flag\./);
      await request(t.http).delete(`/v1/flags/${flag.body.id}`).set(bearer(org.key)).expect(204);

      const file = await uploadFile(t, org, bytes(16));
      await signedUrl(t, org, { contentType: 'image/png', size: 16 });
      expectApiError(await asSession(t, who, org.id).delete('/organization'), 409, 'ORGANIZATION_NOT_EMPTY', /2 files/);
      await request(t.http).delete(`/v1/storage/${file.id}`).set(bearer(org.key)).expect(200);
      expectApiError(await asSession(t, who, org.id).delete('/organization'), 409, 'ORGANIZATION_NOT_EMPTY', /1 file\b/);
      await t.db.query(`DELETE FROM storage_items WHERE organization_id = $1`, [org.id]);

      // Another instance of the deployment has the key in its cache.
      await request(anyone.http).get('/v1/flags').set(bearer(org.key)).expect(200);
      // The flag's audit entries are still there; they go with the organization.
      expect((await t.db.query('SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1', [org.id])).rows[0].n).toBeGreaterThan(
        0,
      );
      await asSession(t, who, org.id).delete('/organization').expect(204);

      for (const table of ['organizations', 'memberships', 'api_keys', 'flag_audit_entries', 'storage_items']) {
        const column = table === 'organizations' ? 'id' : 'organization_id';
        expect((await t.db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [org.id])).rows[0].n).toBe(0);
      }
      await request(t.http).get('/v1/flags').set(bearer(org.key)).expect(401);
      await eventually(async () => (await request(anyone.http).get('/v1/flags').set(bearer(org.key))).status === 401, {
        timeoutMs: 1_500,
        what: "the other instance refuses the deleted organization's key",
      });
      await asSession(t, who, org.id).get('/flags').expect(403);
      expect((await session(t, who)).body.organizations.map((o: { id: string }) => o.id)).toEqual([home.id]);
      expect((await session(t, viewer)).body.organizations.map((o: { id: string }) => o.id)).toEqual([home.id]);
    });

    it('refuses editors, viewers, API keys, a missing CSRF token and anonymous callers', async () => {
      const { who } = await adminOfNewOrganization();
      const org = await ownOrganization(who);
      for (const role of ['editor', 'viewer'] as const) {
        const member = await memberSignedIn(t, org.id, role);
        expect((await asSession(t, member, org.id).delete('/organization')).status).toBe(403);
      }
      expect((await request(t.http).delete('/v1/organization').set(bearer(org.key))).status).toBe(403);
      expectApiError(await asSession(t, who, org.id, { csrf: false }).delete('/organization'), 403, 'CSRF_TOKEN_INVALID');
      await request(t.http).delete('/v1/organization').set('X-Organization-Id', org.id).expect(401);
      expect((await t.db.query('SELECT count(*)::int AS n FROM organizations WHERE id = $1', [org.id])).rows[0].n).toBe(1);
    });

    it('a flag created while the organization is deleted either comes first (409) or creates nothing: never an orphan', async () => {
      const { who } = await adminOfNewOrganization();
      const outcomes = new Set<string>();
      for (let round = 0; round < 12; round += 1) {
        const org = await ownOrganization(who);
        const [create, remove] = await Promise.all([
          request(t.http)
            .post('/v1/flags')
            .set(bearer(org.key))
            .send({ key: `race${round}`, name: 'Race', type: 'boolean', value: true }),
          asSession(t, who, org.id).delete('/organization'),
        ]);
        outcomes.add(`${create.status}/${remove.status}`);
        if (remove.status === 204) {
          expect(create.status).not.toBe(201);
          expect([401, 403]).toContain(create.status);
        } else {
          expect([create.status, remove.status]).toEqual([201, 409]);
          await request(t.http).delete(`/v1/flags/${create.body.id}`).set(bearer(org.key)).expect(204);
          await asSession(t, who, org.id).delete('/organization').expect(204);
        }
      }
      const orphans = await t.db.query(
        'SELECT count(*)::int AS n FROM flags f WHERE NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = f.organization_id)',
      );
      expect(orphans.rows[0].n).toBe(0);
      expect([...outcomes].every((outcome) => ['201/409', '401/204', '403/204'].includes(outcome))).toBe(true);
    });
  });
});
