import request from 'supertest';
import { admin, bearer, createApiKey, createOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, memberSignedIn, PASSWORD, sessionCookieOf, signIn } from '../factories/people.factory';
import { Permission } from '../../src/auth/permission';
import { expectApiError } from '../support/expect-error';
import { LogCapture } from '../support/log-capture';
import { createTestApp, TestApp } from '../support/test-app';

describe('people: users, sign-in, sessions and roles', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('a newcomer', () => {
    it('creates an organization with its first admin in one call, signs in, changes a flag, and the audit log names them', async () => {
      const email = `founder-${Date.now()}@acme.example`;
      const created = await admin(t)
        .post('/organizations')
        .send({ name: 'Acme (production)', admin: { email, name: 'Maya Lin', password: PASSWORD } })
        .expect(201);
      expect(created.body.admin).toEqual({ id: expect.any(String), email, name: 'Maya Lin' });

      const login = await request(t.http).post('/v1/auth/login').send({ email: email.toUpperCase(), password: PASSWORD }).expect(200);
      expect(login.body).toEqual({
        user: { id: created.body.admin.id, email, name: 'Maya Lin', emailVerified: true, reviewMail: true },
        organizations: [{ id: created.body.id, name: 'Acme (production)', role: 'admin' }],
        csrfToken: expect.stringMatching(/^[\w-]{43}$/),
        // An admin may create organizations (ORGANIZATION_CREATION=admins); the admin API's count against nobody.
        organizationCreation: { allowed: true, reason: null, created: 0, limit: 20 },
      });
      const setCookie = ([] as string[]).concat(login.headers['set-cookie'])[0];
      expect(setCookie).toMatch(/^flagstore_session=[\w-]{43}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/);
      const me = { userId: login.body.user.id, email, cookie: sessionCookieOf(setCookie), csrfToken: login.body.csrfToken, body: login.body };

      await asSession(t, me).get('/auth/session').expect(200, login.body);
      const flag = await asSession(t, me, created.body.id)
        .post('/flags')
        .send({ key: 'gems_price', name: 'Gems price', type: 'number', value: 10 })
        .expect(201);
      await asSession(t, me, created.body.id).patch(`/flags/${flag.body.id}`).send({ type: 'number', value: 12 }).expect(200);
      const audit = await asSession(t, me, created.body.id).get(`/flags/audit?flagId=${flag.body.id}`).expect(200);
      expect(audit.body.results.map((entry: { actorType: string; actorId: string }) => [entry.actorType, entry.actorId])).toEqual([
        ['session', me.userId],
        ['session', me.userId],
      ]);
      const filtered = await asSession(t, me, created.body.id).get(`/flags/audit?actorType=session&actorId=${me.userId}`).expect(200);
      expect(filtered.body.total).toBe(2);
    });

    it('joins the existing user with that email as the first admin, keeping their password', async () => {
      const user = await createUser(t);
      // A password for somebody else is refused, not ignored (decisions.md, "A studio's own deployment"); the email alone does.
      const refused = await admin(t)
        .post('/organizations')
        .send({ name: 'Second studio', admin: { email: user.email.toUpperCase(), name: 'Ignored', password: 'another password entirely' } })
        .expect(400);
      expect(refused.body.message).toMatch(/^admin\.password must not be sent/);
      const created = await admin(t)
        .post('/organizations')
        .send({ name: 'Second studio', admin: { email: user.email.toUpperCase(), name: 'Ignored' } })
        .expect(201);
      expect(created.body.admin).toEqual({ id: user.id, email: user.email, name: user.name });
      const session = await signIn(t, user.email);
      expect(session.body.organizations).toEqual([{ id: created.body.id, name: 'Second studio', role: 'admin' }]);
    });

    it('creates neither the organization nor the user when the first admin is invalid', async () => {
      const before = await t.db.query('SELECT (SELECT count(*) FROM organizations)::int AS orgs, (SELECT count(*) FROM users)::int AS users');
      const bad = await admin(t)
        .post('/organizations')
        .send({ name: 'Nope', admin: { email: 'not-an-email', name: 'X', password: PASSWORD } })
        .expect(400);
      expect(bad.body.message).toMatch(/admin\.email must be an email/);
      const short = await admin(t)
        .post('/organizations')
        .send({ name: 'Nope', admin: { email: 'a@b.example', name: 'X', password: 'short' } })
        .expect(400);
      expect(short.body.message).toMatch(/password must be between 12 and 256 characters/);
      const after = await t.db.query('SELECT (SELECT count(*) FROM organizations)::int AS orgs, (SELECT count(*) FROM users)::int AS users');
      expect(after.rows).toEqual(before.rows);
    });
  });

  describe('signing in', () => {
    it('answers an unknown email and a wrong password with the same 401, and sets no cookie', async () => {
      const user = await createUser(t);
      const unknown = await request(t.http).post('/v1/auth/login').send({ email: 'nobody@studio.example', password: PASSWORD }).expect(401);
      const wrong = await request(t.http)
        .post('/v1/auth/login')
        .send({ email: user.email, password: `${PASSWORD}!` })
        .expect(401);
      expectApiError(unknown, 401, 'WRONG_CREDENTIALS', /^Wrong email or password$/);
      expect(wrong.body).toEqual(unknown.body);
      expect(unknown.headers['set-cookie']).toBeUndefined();
      expect(wrong.headers['set-cookie']).toBeUndefined();
    });

    it('refuses a user without a password (single sign-on only) like a wrong password', async () => {
      const user = await createUser(t, { password: null });
      expectApiError(await request(t.http).post('/v1/auth/login').send({ email: user.email, password: PASSWORD }), 401, 'WRONG_CREDENTIALS');
    });

    it('validates users: a malformed email, a password outside 12-256 characters, a taken email (ignoring case)', async () => {
      expectApiError(
        await admin(t).post('/users').send({ email: 'maya@', name: 'Maya', password: PASSWORD }),
        400,
        'VALIDATION_ERROR',
        /email must be an email/,
      );
      expectApiError(
        await admin(t)
          .post('/users')
          .send({ email: 'p@studio.example', name: 'P', password: 'x'.repeat(11) }),
        400,
        'VALIDATION_ERROR',
        /password/,
      );
      expectApiError(
        await admin(t)
          .post('/users')
          .send({ email: 'p@studio.example', name: 'P', password: 'x'.repeat(257) }),
        400,
        'VALIDATION_ERROR',
        /password/,
      );
      expectApiError(
        await admin(t).post('/users').send({ email: 'p@studio.example', name: '', password: PASSWORD }),
        400,
        'VALIDATION_ERROR',
        /name/,
      );
      const user = await createUser(t);
      expectApiError(await admin(t).post('/users').send({ email: user.email.toUpperCase(), name: 'Twin' }), 409, 'EMAIL_TAKEN', /email/);
      await admin(t)
        .post('/users')
        .send({ email: 'p@studio.example', name: 'P', password: 'x'.repeat(256) })
        .expect(201);
    });

    it('never stores the password or the session token in the clear', async () => {
      const user = await createUser(t);
      const session = await signIn(t, user.email);
      const { rows } = await t.db.query(
        `SELECT u.password_hash AS "passwordHash", s.token_hash AS "tokenHash" FROM users u JOIN sessions s ON s.user_id = u.id WHERE u.id = $1`,
        [user.id],
      );
      expect(rows[0].passwordHash).toMatch(/^scrypt\$\d+\$8\$1\$/);
      expect(rows[0].passwordHash).not.toContain(PASSWORD);
      expect(rows[0].tokenHash).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0].tokenHash).not.toContain(session.cookie.split('=')[1]);
    });
  });

  describe('a session on the API', () => {
    it('needs X-Organization-Id naming one of the user’s organizations', async () => {
      const org = await createOrganization(t);
      const other = await createOrganization(t);
      const me = await memberSignedIn(t, org.id, 'editor');
      expectApiError(await asSession(t, me).get('/flags'), 403, 'FORBIDDEN', /X-Organization-Id/);
      expectApiError(await asSession(t, me, other.id).get('/flags'), 403, 'FORBIDDEN', /not a member/);
      expectApiError(await asSession(t, me, 'not-a-uuid').get('/flags'), 403, 'FORBIDDEN', /not a member/);
      await asSession(t, me, org.id).get('/flags').expect(200);
    });

    it('refuses a change without the session’s CSRF token, writing nothing', async () => {
      const org = await createOrganization(t);
      const me = await memberSignedIn(t, org.id, 'editor');
      const missing = await asSession(t, me, org.id, { csrf: false })
        .post('/flags')
        .send({ key: 'no_csrf', name: 'x', type: 'boolean', value: true });
      expectApiError(missing, 403, 'CSRF_TOKEN_INVALID', /X-CSRF-Token/);
      const wrong = await asSession(t, me, org.id, { csrf: false })
        .post('/flags')
        .set('X-CSRF-Token', 'x'.repeat(43))
        .send({ key: 'no_csrf', name: 'x', type: 'boolean', value: true });
      expectApiError(wrong, 403, 'CSRF_TOKEN_INVALID');
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows[0].n).toBe(0);
      // Reads need no CSRF token.
      await asSession(t, me, org.id, { csrf: false }).get('/flags').expect(200);
    });

    it('refuses a forged or malformed cookie with 401', async () => {
      const org = await createOrganization(t);
      const forged = await request(t.http)
        .get('/v1/flags')
        .set('Cookie', `flagstore_session=${'A'.repeat(43)}`)
        .set('X-Organization-Id', org.id);
      expectApiError(forged, 401, 'UNAUTHORIZED', /session has ended or is not valid/);
      const malformed = await request(t.http).get('/v1/flags').set('Cookie', 'flagstore_session=abc').set('X-Organization-Id', org.id);
      expectApiError(malformed, 401, 'UNAUTHORIZED');
      expectApiError(await request(t.http).get('/v1/auth/session').set('Cookie', 'flagstore_session=abc'), 401, 'UNAUTHORIZED', /sign in/i);
      expectApiError(await request(t.http).get('/v1/auth/session'), 401, 'UNAUTHORIZED');
    });

    it('is judged by the bearer key alone when a request carries both', async () => {
      const org = await createOrganization(t);
      const readOnly = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const me = await memberSignedIn(t, org.id, 'editor');
      const both = await asSession(t, me, org.id)
        .post('/flags')
        .set(bearer(readOnly.key))
        .send({ key: 'both', name: 'x', type: 'boolean', value: true });
      expectApiError(both, 403, 'FORBIDDEN', /API key lacks the FLAGS_WRITE/);
    });

    it('never reaches the admin API, and an API key never reaches the people routes', async () => {
      const org = await createOrganization(t);
      const me = await memberSignedIn(t, org.id, 'admin');
      expectApiError(await asSession(t, me, org.id).get('/admin/organizations'), 401, 'UNAUTHORIZED');
      expectApiError(await asSession(t, me, org.id).post('/admin/users').send({ email: 'x@y.example', name: 'x' }), 401, 'UNAUTHORIZED');
      for (const path of ['/organization/members', '/organization/api-keys', '/organization/invitations']) {
        expectApiError(await request(t.http).get(`/v1${path}`).set(bearer(org.key)), 403, 'FORBIDDEN', /API keys never manage people or keys/);
      }
      expectApiError(
        await request(t.http)
          .post('/v1/organization/api-keys')
          .set(bearer(org.key))
          .send({ name: 'k', permissions: ['FLAGS_READ'] }),
        403,
        'FORBIDDEN',
      );
    });

    it('counts against a budget of the user, as a key’s requests count against the key’s', async () => {
      const limited = await createTestApp({ API_RATE_LIMIT_PER_MINUTE: '3' });
      try {
        const org = await createOrganization(limited);
        const me = await memberSignedIn(limited, org.id, 'viewer');
        for (let i = 0; i < 3; i += 1) await asSession(limited, me, org.id).get('/flags').expect(200);
        const refused = await asSession(limited, me, org.id).get('/flags').expect(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        // The key of the same organization has a budget of its own.
        await request(limited.http).get('/v1/flags').set(bearer(org.key)).expect(200);
      } finally {
        await limited.close();
      }
    });
  });

  describe('roles', () => {
    const flag = { key: 'role_flag', name: 'x', type: 'boolean', value: true };

    it('gives viewers reads only, editors flag and file changes, and admins the organization’s people and keys', async () => {
      const org = await createOrganization(t);
      const viewer = await memberSignedIn(t, org.id, 'viewer');
      const editor = await memberSignedIn(t, org.id, 'editor');
      const boss = await memberSignedIn(t, org.id, 'admin');

      // Flags and storage: viewers read, editors and admins write.
      await asSession(t, viewer, org.id).get('/flags').expect(200);
      await asSession(t, viewer, org.id).get('/storage').expect(200);
      expectApiError(await asSession(t, viewer, org.id).post('/flags').send(flag), 403, 'FORBIDDEN', /role lacks the FLAGS_WRITE/);
      const upload = await asSession(t, viewer, org.id).get('/storage/signed-url?contentType=image/png&size=10');
      expect(upload.status).toBe(403);
      const created = await asSession(t, editor, org.id).post('/flags').send(flag).expect(201);
      await asSession(t, boss, org.id).patch(`/flags/${created.body.id}`).send({ type: 'boolean', value: false }).expect(200);
      await asSession(t, editor, org.id).get('/storage/signed-url?contentType=image/png&size=10').expect(200);

      // People and keys: every member reads them, only admins change them.
      for (const who of [viewer, editor, boss]) {
        await asSession(t, who, org.id).get('/organization/members').expect(200);
        await asSession(t, who, org.id).get('/organization/api-keys').expect(200);
      }
      for (const who of [viewer, editor]) {
        expectApiError(await asSession(t, who, org.id).get('/organization/invitations'), 403, 'FORBIDDEN', /admin role/);
        expectApiError(
          await asSession(t, who, org.id).post('/organization/invitations').send({ email: 'x@y.example', role: 'viewer' }),
          403,
          'FORBIDDEN',
        );
        expectApiError(
          await asSession(t, who, org.id)
            .post('/organization/api-keys')
            .send({ name: 'k', permissions: ['FLAGS_READ'] }),
          403,
          'FORBIDDEN',
        );
        expectApiError(await asSession(t, who, org.id).patch(`/organization/members/${viewer.userId}`).send({ role: 'admin' }), 403, 'FORBIDDEN');
        expectApiError(await asSession(t, who, org.id).delete(`/organization/members/${viewer.userId}`), 403, 'FORBIDDEN');
      }
      await asSession(t, boss, org.id).get('/organization/invitations').expect(200);
    });

    it('applies a new role and a removal from the member’s next request', async () => {
      const org = await createOrganization(t);
      const boss = await memberSignedIn(t, org.id, 'admin');
      const member = await memberSignedIn(t, org.id, 'editor');
      await asSession(t, member, org.id)
        .post('/flags')
        .send({ ...flag, key: 'before_demotion' })
        .expect(201);
      await asSession(t, boss, org.id).patch(`/organization/members/${member.userId}`).send({ role: 'viewer' }).expect(200);
      expectApiError(
        await asSession(t, member, org.id)
          .post('/flags')
          .send({ ...flag, key: 'after_demotion' }),
        403,
        'FORBIDDEN',
      );
      await asSession(t, boss, org.id).delete(`/organization/members/${member.userId}`).expect(204);
      expectApiError(await asSession(t, member, org.id).get('/flags'), 403, 'FORBIDDEN', /not a member/);
      // Still signed in: the session lives on, without that organization.
      const session = await asSession(t, member).get('/auth/session').expect(200);
      expect(session.body.organizations).toEqual([]);
      const members = await asSession(t, boss, org.id).get('/organization/members?former=true').expect(200);
      expect(members.body.members.map((m: { userId: string }) => m.userId)).toEqual([boss.userId]);
      expect(members.body.former).toEqual([{ userId: member.userId, name: expect.any(String), leftAt: expect.any(String) }]);
      expect((await asSession(t, boss, org.id).get('/organization/members').expect(200)).body.former).toBeUndefined();
    });

    it('keeps the last admin: removing or demoting them is 409, deleting their user too', async () => {
      const org = await createOrganization(t);
      const boss = await memberSignedIn(t, org.id, 'admin');
      expectApiError(await asSession(t, boss, org.id).patch(`/organization/members/${boss.userId}`).send({ role: 'editor' }), 409, 'LAST_ADMIN');
      expectApiError(await asSession(t, boss, org.id).delete(`/organization/members/${boss.userId}`), 409, 'LAST_ADMIN');
      expectApiError(await admin(t).patch(`/organizations/${org.id}/members/${boss.userId}`).send({ role: 'viewer' }), 409, 'LAST_ADMIN');
      expectApiError(await admin(t).delete(`/organizations/${org.id}/members/${boss.userId}`), 409, 'LAST_ADMIN');
      expectApiError(await admin(t).delete(`/users/${boss.userId}`), 409, 'LAST_ADMIN', new RegExp(org.id));
      await asSession(t, boss, org.id).get('/organization/members').expect(200);
    });

    it('leaves one admin when two admins remove each other at once', async () => {
      for (let round = 0; round < 5; round += 1) {
        const org = await createOrganization(t);
        const a = await memberSignedIn(t, org.id, 'admin');
        const b = await memberSignedIn(t, org.id, 'admin');
        const [removeB, removeA] = await Promise.all([
          asSession(t, a, org.id).delete(`/organization/members/${b.userId}`),
          asSession(t, b, org.id).delete(`/organization/members/${a.userId}`),
        ]);
        // One removal wins. The other is judged after it: the last admin stays (409), or, when the winner's removal
        // reached the loser's session first, the loser is no longer a member at all (403).
        const statuses = [removeB.status, removeA.status].sort();
        expect(statuses[0]).toBe(204);
        expect([403, 409]).toContain(statuses[1]);
        const { rows } = await t.db.query(
          `SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1 AND role = 'admin' AND left_at IS NULL`,
          [org.id],
        );
        expect(rows[0].n).toBe(1);
      }
    });
  });

  describe('logout, password change and deleted users', () => {
    it('ends the session at logout, clears the cookie, and needs the CSRF token', async () => {
      const org = await createOrganization(t);
      const me = await memberSignedIn(t, org.id, 'viewer');
      expectApiError(await asSession(t, me, undefined, { csrf: false }).post('/auth/logout'), 403, 'CSRF_TOKEN_INVALID');
      const out = await asSession(t, me).post('/auth/logout').expect(204);
      expect(([] as string[]).concat(out.headers['set-cookie'])[0]).toMatch(/^flagstore_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
      expectApiError(await asSession(t, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      expectApiError(await asSession(t, me).get('/auth/session'), 401, 'UNAUTHORIZED');
    });

    it('changes a password, ending every other session of the user and keeping this one', async () => {
      const org = await createOrganization(t);
      const user = await createUser(t);
      await addMember(t, org.id, user.id, 'viewer');
      const here = await signIn(t, user.email);
      const elsewhere = await signIn(t, user.email);
      expectApiError(
        await asSession(t, here).post('/auth/password').send({ currentPassword: 'not my password!', newPassword: 'a brand new passphrase' }),
        400,
        'VALIDATION_ERROR',
        /currentPassword/,
      );
      expectApiError(
        await asSession(t, here).post('/auth/password').send({ currentPassword: PASSWORD, newPassword: 'short' }),
        400,
        'VALIDATION_ERROR',
        /newPassword/,
      );
      await asSession(t, here).post('/auth/password').send({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase' }).expect(204);
      await asSession(t, here, org.id).get('/flags').expect(200);
      expectApiError(await asSession(t, elsewhere, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      await request(t.http).post('/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(401);
      await signIn(t, user.email, 'a brand new passphrase');
    });

    it('deletes a user: signed out at once, gone from the list, the audit keeps the id, the email free again', async () => {
      const org = await createOrganization(t);
      await memberSignedIn(t, org.id, 'admin');
      const leaving = await memberSignedIn(t, org.id, 'editor');
      const changed = await asSession(t, leaving, org.id)
        .post('/flags')
        .send({ key: 'left_behind', name: 'x', type: 'boolean', value: true })
        .expect(201);
      await admin(t).delete(`/users/${leaving.userId}`).expect(204);
      expectApiError(await asSession(t, leaving, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      const list = await admin(t)
        .get(`/users?search=${encodeURIComponent(leaving.email)}`)
        .expect(200);
      expect(list.body).toEqual({ results: [], total: 0, page: 1, totalPages: 0 });
      const audit = await request(t.http).get(`/v1/flags/audit?flagId=${changed.body.id}`).set(bearer(org.key)).expect(200);
      expect(audit.body.results[0]).toMatchObject({ actorType: 'session', actorId: leaving.userId });
      await admin(t).post('/users').send({ email: leaving.email, name: 'New person' }).expect(201);
      expectApiError(await admin(t).delete(`/users/${leaving.userId}`), 404, 'USER_NOT_FOUND');
    });

    it('lists users newest first, searching email and name', async () => {
      const marker = `marker${Date.now()}`;
      const first = await createUser(t, { name: `First ${marker}` });
      const second = await createUser(t, { email: `${marker}@studio.example` });
      const page = await admin(t).get(`/users?search=${marker}`).expect(200);
      expect(page.body.results.map((user: { id: string }) => user.id)).toEqual([second.id, first.id]);
      expect(page.body.results[0]).toEqual({
        id: second.id,
        email: second.email,
        name: second.name,
        createdAt: expect.any(String),
        emailVerified: true,
      });
      expect(JSON.stringify(page.body)).not.toMatch(/password|scrypt/);
      expectApiError(await admin(t).get('/users?limit=101'), 400, 'VALIDATION_ERROR', /limit/);
    });

    it('manages memberships through the admin API: 404s, 409 for a second membership, a former member joining again', async () => {
      const org = await createOrganization(t);
      const user = await createUser(t);
      const added = await admin(t).post(`/organizations/${org.id}/members`).send({ userId: user.id, role: 'viewer' }).expect(201);
      expect(added.body).toEqual({ userId: user.id, email: user.email, name: user.name, role: 'viewer', createdAt: expect.any(String) });
      expectApiError(await admin(t).post(`/organizations/${org.id}/members`).send({ userId: user.id, role: 'editor' }), 409, 'ALREADY_A_MEMBER');
      expectApiError(
        await admin(t).post(`/organizations/${org.id}/members`).send({ userId: user.id, role: 'owner' }),
        400,
        'VALIDATION_ERROR',
        /role must be one of viewer, editor, admin/,
      );
      expectApiError(
        await admin(t).post(`/organizations/00000000-0000-4000-8000-000000000000/members`).send({ userId: user.id, role: 'viewer' }),
        404,
        'ORGANIZATION_NOT_FOUND',
      );
      expectApiError(
        await admin(t).post(`/organizations/${org.id}/members`).send({ userId: '00000000-0000-4000-8000-000000000000', role: 'viewer' }),
        404,
        'USER_NOT_FOUND',
      );
      const updated = await admin(t).patch(`/organizations/${org.id}/members/${user.id}`).send({ role: 'editor' }).expect(200);
      expect(updated.body.role).toBe('editor');
      await admin(t).delete(`/organizations/${org.id}/members/${user.id}`).expect(204);
      expectApiError(await admin(t).delete(`/organizations/${org.id}/members/${user.id}`), 404, 'MEMBER_NOT_FOUND');
      await admin(t).post(`/organizations/${org.id}/members`).send({ userId: user.id, role: 'admin' }).expect(201);
    });
  });

  describe('the organization’s keys, with a session', () => {
    it('lists keys with revoked ones, issues one (shown once) and revokes it', async () => {
      const org = await createOrganization(t);
      const boss = await memberSignedIn(t, org.id, 'admin');
      const issued = await asSession(t, boss, org.id)
        .post('/organization/api-keys')
        .send({ name: 'game-server', permissions: ['FLAGS_READ'] })
        .expect(201);
      expect(issued.body.key).toMatch(/^fsk_/);
      await request(t.http).get('/v1/flags/config').set(bearer(issued.body.key)).expect(200);
      await asSession(t, boss, org.id).delete(`/organization/api-keys/${issued.body.id}`).expect(204);
      await request(t.http).get('/v1/flags/config').set(bearer(issued.body.key)).expect(401);
      const keys = await asSession(t, boss, org.id).get('/organization/api-keys').expect(200);
      expect(keys.body).toEqual([
        { id: org.keyId, name: expect.any(String), permissions: expect.any(Array), createdAt: expect.any(String), revokedAt: null },
        { id: issued.body.id, name: 'game-server', permissions: ['FLAGS_READ'], createdAt: expect.any(String), revokedAt: expect.any(String) },
      ]);
      expect(JSON.stringify(keys.body)).not.toMatch(/fsk_|keyHash/);
      const other = await createOrganization(t);
      expectApiError(await asSession(t, boss, org.id).delete(`/organization/api-keys/${other.keyId}`), 404, 'API_KEY_NOT_FOUND');
    });
  });

  describe('secrets in logs', () => {
    it('never writes a password, a session or CSRF token, or an invitation link to a log line, even at trace level', async () => {
      const logs = new LogCapture();
      const traced = await createTestApp({ LOG_LEVEL: 'trace' }, { logDestination: logs });
      try {
        const org = await createOrganization(traced);
        const user = await createUser(traced, { password: 'first secret passphrase' });
        await addMember(traced, org.id, user.id, 'admin');
        await request(traced.http).post('/v1/auth/login').send({ email: user.email, password: 'wrong secret passphrase' }).expect(401);
        const me = await signIn(traced, user.email, 'first secret passphrase');
        await asSession(traced, me)
          .post('/auth/password')
          .send({ currentPassword: 'not the secret at all', newPassword: 'second secret passphrase' })
          .expect(400);
        await asSession(traced, me)
          .post('/auth/password')
          .send({ currentPassword: 'first secret passphrase', newPassword: 'second secret passphrase' })
          .expect(204);
        const invitation = await asSession(traced, me, org.id)
          .post('/organization/invitations')
          .send({ email: 'new@studio.example', role: 'viewer' })
          .expect(201);
        const token = invitation.body.url.split('/').pop();
        await request(traced.http)
          .post(`/v1/auth/invitations/${token}/accept`)
          .send({ name: 'New', password: 'third secret passphrase' })
          .expect(200);
        await request(traced.http)
          .get('/v1/flags')
          .set('Cookie', `flagstore_session=${'Z'.repeat(43)}`)
          .set('X-Organization-Id', org.id)
          .expect(401);
        await asSession(traced, me).post('/auth/logout').expect(204);

        expect(logs.requests().length).toBeGreaterThanOrEqual(8);
        const sessionToken = me.cookie.split('=')[1];
        for (const secret of ['secret passphrase', 'wrong secret', sessionToken, me.csrfToken, token, 'Z'.repeat(43)]) {
          expect(logs.text).not.toContain(secret);
        }
        expect(logs.text).not.toMatch(/flagstore_session=|x-csrf-token/i);
      } finally {
        await traced.close();
      }
    });
  });
});
