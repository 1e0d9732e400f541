import request from 'supertest';
import { admin } from '../factories/organizations.factory';
import { createUser, PASSWORD, signIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * POST /v1/admin/organizations with `admin` (decisions.md, "A studio's own deployment"): an existing user is named by
 * email alone and keeps their password; a password sent for them is refused, not ignored; a new user still needs one.
 */
describe('an organization and its first admin, through the admin API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const counts = async () =>
    (await t.db.query('SELECT (SELECT count(*) FROM organizations)::int AS orgs, (SELECT count(*) FROM users)::int AS users')).rows[0];

  it('makes an existing user its admin from their email alone; they sign in with their own password', async () => {
    const user = await createUser(t);
    const created = await admin(t)
      .post('/organizations')
      .send({ name: 'Acme (staging)', admin: { email: user.email } })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme (staging)',
      storageAllocation: 1024 ** 3,
      createdAt: expect.any(String),
      admin: { id: user.id, email: user.email, name: user.name },
    });
    const session = await signIn(t, user.email, PASSWORD);
    expect(session.body.organizations).toEqual([{ id: created.body.id, name: 'Acme (staging)', role: 'admin' }]);
  });

  it('takes an existing user who has no password at all (single sign-on) by email alone', async () => {
    const user = await createUser(t, { password: null });
    const created = await admin(t)
      .post('/organizations')
      .send({ name: 'SSO studio', admin: { email: user.email.toUpperCase() } })
      .expect(201);
    expect(created.body.admin).toEqual({ id: user.id, email: user.email, name: user.name });
    const { rows } = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(rows).toEqual([{ password_hash: null }]);
  });

  it('refuses a password sent for an existing user with 400 naming admin.password, and creates nothing', async () => {
    const user = await createUser(t);
    const { rows: before } = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    const counted = await counts();
    const refused = await admin(t)
      .post('/organizations')
      .send({ name: 'Nope', admin: { email: user.email, name: user.name, password: 'somebody else typed this' } })
      .expect(400);
    expectApiError(refused, 400, 'VALIDATION_ERROR', /^admin\.password must not be sent: a user with email .* exists/);
    expect(await counts()).toEqual(counted);
    const { rows: after } = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(after).toEqual(before);
    // Their own password still works, the one sent does not.
    await signIn(t, user.email, PASSWORD);
    await request(t.http).post('/v1/auth/login').send({ email: user.email, password: 'somebody else typed this' }).expect(401);
  });

  it('still needs a name and a password for a new user, naming the field that is missing', async () => {
    const counted = await counts();
    const email = `new-${Date.now()}@studio.example`;
    const noPassword = await admin(t)
      .post('/organizations')
      .send({ name: 'Nope', admin: { email, name: 'New Person' } })
      .expect(400);
    expectApiError(noPassword, 400, 'VALIDATION_ERROR', /^admin\.password must be a string: no user has this email yet/);
    const noName = await admin(t)
      .post('/organizations')
      .send({ name: 'Nope', admin: { email, password: PASSWORD } })
      .expect(400);
    expectApiError(noName, 400, 'VALIDATION_ERROR', /^admin\.name must be a string/);
    expect(await counts()).toEqual(counted);

    const created = await admin(t)
      .post('/organizations')
      .send({ name: 'New studio', admin: { email, name: 'New Person', password: PASSWORD } })
      .expect(201);
    expect(created.body.admin).toEqual({ id: expect.any(String), email, name: 'New Person' });
    await signIn(t, email, PASSWORD);
  });

  it.each([
    ['a null password', { password: null }, /^admin\.password must be a string/],
    ['a numeric password', { password: 123456789012 }, /^admin\.password must be a string/],
    ['a short password', { password: 'short' }, /^admin\.password must be between 12 and 256 characters/],
    ['a null name', { name: null }, /^admin\.name must be a string/],
    ['an empty name', { name: '' }, /^admin\.name must be between 1 and 100 characters/],
  ])('refuses %s with 400 naming the field, whether or not the user exists', async (_label, fields, message) => {
    const user = await createUser(t);
    for (const email of [user.email, `nobody-${Date.now()}@studio.example`]) {
      const response = await admin(t)
        .post('/organizations')
        .send({ name: 'Nope', admin: { email, ...fields } })
        .expect(400);
      expectApiError(response, 400, 'VALIDATION_ERROR', message);
    }
  });

  it('makes one existing user the admin of several organizations created at once', async () => {
    const user = await createUser(t);
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        admin(t)
          .post('/organizations')
          .send({ name: `Burst ${i}`, admin: { email: user.email } }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM memberships WHERE user_id = $1 AND role = 'admin'`, [user.id]);
    expect(rows[0].n).toBe(4);
  });
});
