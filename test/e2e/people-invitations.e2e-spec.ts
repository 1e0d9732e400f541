import request from 'supertest';
import { createOrganization } from '../factories/organizations.factory';
import { asSession, createUser, memberSignedIn, sessionCookieOf, signIn } from '../factories/people.factory';
import { INVITATION_TTL_MS } from '../../src/people/people.service';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { createTestApp, TestApp } from '../support/test-app';

describe('invitations: a single-use link to join an organization', () => {
  const clock = new FakeClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_URL: 'https://flags.studio.example' }, { clock });
  });
  afterAll(() => t.close());

  const tokenOf = (url: string) => url.split('/').pop()!;
  const accept = (token: string) => request(t.http).post(`/v1/auth/invitations/${token}/accept`);

  it('invites by email; the invited person joins as a new user through the link, signed in, and the link works once', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    const created = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'Sam@Studio.example', role: 'editor' })
      .expect(201);
    // Stored and answered in its one spelling (src/people/email-address.ts).
    expect(created.body).toEqual({
      id: expect.any(String),
      email: 'sam@studio.example',
      role: 'editor',
      createdAt: expect.any(String),
      expiresAt: new Date(clock.now() + INVITATION_TTL_MS).toISOString(),
      url: expect.stringMatching(/^https:\/\/flags\.studio\.example\/console\/invitations\/[\w-]{43}$/),
    });
    const pending = await asSession(t, boss, org.id).get('/organization/invitations').expect(200);
    expect(pending.body).toEqual([
      { id: created.body.id, email: 'sam@studio.example', role: 'editor', createdAt: expect.any(String), expiresAt: expect.any(String) },
    ]);
    expect(JSON.stringify(pending.body)).not.toContain(tokenOf(created.body.url));
    const { rows } = await t.db.query('SELECT token_hash FROM invitations WHERE id = $1', [created.body.id]);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);

    expectApiError(await accept(tokenOf(created.body.url)).send({ name: 'Sam' }), 400, 'VALIDATION_ERROR', /name and password/);
    expectApiError(await accept(tokenOf(created.body.url)).send({ name: 'Sam', password: 'short' }), 400, 'VALIDATION_ERROR', /password/);
    const joined = await accept(tokenOf(created.body.url)).send({ name: 'Sam Ortiz', password: 'sam has a passphrase' }).expect(200);
    expect(joined.body).toEqual({
      user: { id: expect.any(String), email: 'sam@studio.example', name: 'Sam Ortiz', emailVerified: false, reviewMail: true },
      organizations: [{ id: org.id, name: expect.any(String), role: 'editor' }],
      csrfToken: expect.any(String),
      organizationCreation: { allowed: false, reason: 'ORGANIZATION_CREATION_ADMINS_ONLY', created: 0, limit: 20 },
    });
    // PUBLIC_URL is https: the cookie is Secure.
    const setCookie = ([] as string[]).concat(joined.headers['set-cookie'])[0];
    expect(setCookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    const sam = {
      userId: joined.body.user.id,
      email: 'sam@studio.example',
      cookie: sessionCookieOf(setCookie),
      csrfToken: joined.body.csrfToken,
      body: joined.body,
    };
    await asSession(t, sam, org.id).post('/flags').send({ key: 'sam_was_here', name: 'x', type: 'boolean', value: true }).expect(201);
    await signIn(t, 'SAM@studio.example', 'sam has a passphrase');

    expectApiError(
      await accept(tokenOf(created.body.url)).send({ name: 'Again', password: 'another passphrase' }),
      410,
      'INVITATION_USED',
      /accepted already/,
    );
    expect((await asSession(t, boss, org.id).get('/organization/invitations').expect(200)).body).toEqual([]);
  });

  it('refuses an unknown, malformed, withdrawn or expired link, writing nothing', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    expectApiError(await accept('A'.repeat(43)).send({ name: 'X', password: 'a long passphrase' }), 404, 'INVITATION_NOT_FOUND');
    expectApiError(await accept('not-a-token').send({ name: 'X', password: 'a long passphrase' }), 404, 'INVITATION_NOT_FOUND');

    const withdrawn = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'w@studio.example', role: 'viewer' })
      .expect(201);
    await asSession(t, boss, org.id).delete(`/organization/invitations/${withdrawn.body.id}`).expect(204);
    expectApiError(await asSession(t, boss, org.id).delete(`/organization/invitations/${withdrawn.body.id}`), 404, 'INVITATION_NOT_FOUND');
    expectApiError(await accept(tokenOf(withdrawn.body.url)).send({ name: 'W', password: 'a long passphrase' }), 410, 'INVITATION_USED', /withdrawn/);

    const expiring = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'e@studio.example', role: 'viewer' })
      .expect(201);
    clock.advance(INVITATION_TTL_MS);
    expectApiError(await accept(tokenOf(expiring.body.url)).send({ name: 'E', password: 'a long passphrase' }), 410, 'INVITATION_USED', /expired/);
    const bossAgain = await signIn(t, boss.email); // a week later, the earlier session has gone idle
    expect((await asSession(t, bossAgain, org.id).get('/organization/invitations').expect(200)).body).toEqual([]);

    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM users WHERE email IN ('w@studio.example', 'e@studio.example')`);
    expect(rows[0].n).toBe(0);
  });

  it('lets an existing user join with their own session only, and refuses inviting a member', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    const existing = await createUser(t);
    expectApiError(
      await asSession(t, boss, org.id).post('/organization/invitations').send({ email: boss.email, role: 'viewer' }),
      409,
      'ALREADY_A_MEMBER',
    );
    expectApiError(
      await asSession(t, boss, org.id).post('/organization/invitations').send({ email: 'nope', role: 'viewer' }),
      400,
      'VALIDATION_ERROR',
      /email/,
    );
    expectApiError(
      await asSession(t, boss, org.id).post('/organization/invitations').send({ email: 'x@studio.example', role: 'owner' }),
      400,
      'VALIDATION_ERROR',
      /role/,
    );

    const invitation = await asSession(t, boss, org.id).post('/organization/invitations').send({ email: existing.email, role: 'viewer' }).expect(201);
    const token = tokenOf(invitation.body.url);
    // Without a session, or with someone else's, the link does not make a second user with that email.
    expectApiError(
      await accept(token).send({ name: 'Impostor', password: 'a long passphrase' }),
      401,
      'SIGN_IN_REQUIRED',
      /Sign in as the invited person, or create the account/,
    );
    expectApiError(await asSession(t, boss).post(`/auth/invitations/${token}/accept`).send({}), 401, 'SIGN_IN_REQUIRED');
    const me = await signIn(t, existing.email);
    expectApiError(await asSession(t, me, undefined, { csrf: false }).post(`/auth/invitations/${token}/accept`).send({}), 403, 'CSRF_TOKEN_INVALID');
    await asSession(t, me).post(`/auth/invitations/${token}/accept`).send({}).expect(204);
    await asSession(t, me, org.id).get('/flags').expect(200);
    const members = await asSession(t, boss, org.id).get('/organization/members').expect(200);
    expect(members.body.members.map((member: { userId: string; role: string }) => [member.userId, member.role])).toEqual([
      [boss.userId, 'admin'],
      [existing.id, 'viewer'],
    ]);
  });

  it('replaces a pending invitation for the same email: the older link stops working', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    const first = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'twice@studio.example', role: 'viewer' })
      .expect(201);
    const second = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'TWICE@studio.example', role: 'editor' })
      .expect(201);
    expectApiError(await accept(tokenOf(first.body.url)).send({ name: 'T', password: 'a long passphrase' }), 410, 'INVITATION_USED');
    const joined = await accept(tokenOf(second.body.url)).send({ name: 'T', password: 'a long passphrase' }).expect(200);
    expect(joined.body.organizations).toEqual([{ id: org.id, name: expect.any(String), role: 'editor' }]);
  });

  it('serialises two acceptances of one link: one user, one membership', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    const invitation = await asSession(t, boss, org.id)
      .post('/organization/invitations')
      .send({ email: 'race@studio.example', role: 'viewer' })
      .expect(201);
    const token = tokenOf(invitation.body.url);
    const answers = await Promise.all([1, 2, 3].map(() => accept(token).send({ name: 'Racer', password: 'a long passphrase' })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 410, 410]);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM users WHERE email = 'race@studio.example'`);
    expect(rows[0].n).toBe(1);
  });
});
