import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { admin, createOrganization } from '../factories/organizations.factory';
import { asSession, createUser, memberSignedIn, sessionCookieOf } from '../factories/people.factory';
import { callbackPathOf, cookiePairsOf, signInAtProvider } from '../support/oidc-browser';
import { OidcTestProvider, startOidcProvider } from '../support/servers/oidc-provider';
import { createTestApp, TestApp } from '../support/test-app';

// The service's PUBLIC_URL is never dialled: the browser driver stops where the provider sends it back, and the
// test sends that path and query to the app.
const PUBLIC_URL = 'http://flagstore.test';
const client = {
  clientId: 'flagstore',
  clientSecret: randomBytes(24).toString('base64url'),
  redirectUri: `${PUBLIC_URL}/v1/auth/sso/callback`,
};

describe('single sign-on through the routes, against a real OpenID provider', () => {
  let provider: OidcTestProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startOidcProvider({
      client,
      accounts: [
        { sub: 'ada', email: 'ada@studio.test', email_verified: true, name: 'Ada Lovelace' },
        { sub: 'ivy', email: 'ivy@studio.test', email_verified: true, name: 'Ivy Invited' },
        { sub: 'stranger', email: 'stranger@elsewhere.test', email_verified: true, name: 'A Stranger' },
        { sub: 'unverified', email: 'unverified@studio.test', email_verified: false },
      ],
    });
    t = await createTestApp({
      PUBLIC_URL,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: client.clientId,
      OIDC_CLIENT_SECRET: client.clientSecret,
    });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });

  /** Starts a sign-in at the app, signs in at the provider as `login`: the callback's path and the pending cookie. */
  async function throughProvider(login: string, returnTo = '/console/flags'): Promise<{ callback: string; cookie: string }> {
    const started = await request(t.http)
      .get(`/v1/auth/sso?returnTo=${encodeURIComponent(returnTo)}`)
      .expect(302);
    expect(started.headers.location.startsWith(`${provider.issuer}/`)).toBe(true);
    const pending = ([] as string[]).concat(started.headers['set-cookie'])[0];
    expect(pending).toMatch(/^flagstore_sso=[\w-]+; Path=\/v1\/auth\/sso; Max-Age=600; HttpOnly; SameSite=Lax$/);
    const authorization = new URL(started.headers.location);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('state')).toBeTruthy();
    expect(authorization.searchParams.get('nonce')).toBeTruthy();
    return {
      callback: callbackPathOf(await signInAtProvider(started.headers.location, { login })),
      cookie: cookiePairsOf(started.headers['set-cookie']),
    };
  }

  it('says single sign-on is offered', async () => {
    await request(t.http).get('/v1/auth/methods').expect(200, { password: true, sso: true, passwordReset: false });
  });

  it('signs in the user with the verified email, and lands where the sign-in started', async () => {
    const org = await createOrganization(t);
    // Made as Ada@Studio.test, stored in its one spelling: the provider's ada@studio.test is the same email.
    const ada = await createUser(t, { email: 'Ada@Studio.test', name: 'Ada', password: null });
    await admin(t).post(`/organizations/${org.id}/members`).send({ userId: ada.id, role: 'editor' }).expect(201);

    const { callback, cookie } = await throughProvider('ada');
    const done = await request(t.http).get(callback).set('Cookie', cookie).expect(302);
    expect(done.headers.location).toBe('/console/flags');
    const cookies = ([] as string[]).concat(done.headers['set-cookie']);
    expect(cookies).toContainEqual(expect.stringMatching(/^flagstore_session=[\w-]{43}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/));
    expect(cookies).toContainEqual(expect.stringMatching(/^flagstore_sso=; Path=\/v1\/auth\/sso; Max-Age=0/));

    const session = await request(t.http).get('/v1/auth/session').set('Cookie', sessionCookieOf(cookies)).expect(200);
    expect(session.body.user).toEqual({ id: ada.id, email: 'ada@studio.test', name: 'Ada', emailVerified: true, reviewMail: true });
    expect(session.body.organizations).toEqual([{ id: org.id, name: expect.any(String), role: 'editor' }]);
    const me = { userId: ada.id, email: ada.email, cookie: sessionCookieOf(cookies), csrfToken: session.body.csrfToken, body: session.body };
    const flag = await asSession(t, me, org.id).post('/flags').send({ key: 'sso_flag', name: 'x', type: 'boolean', value: true }).expect(201);
    const audit = await asSession(t, me, org.id).get(`/flags/audit?flagId=${flag.body.id}`).expect(200);
    expect(audit.body.results[0]).toMatchObject({ actorType: 'session', actorId: ada.id });
  });

  it('accepts a pending invitation for the verified email: a user without a password, a member with the invited role', async () => {
    const org = await createOrganization(t);
    const boss = await memberSignedIn(t, org.id, 'admin');
    await asSession(t, boss, org.id).post('/organization/invitations').send({ email: 'ivy@studio.test', role: 'viewer' }).expect(201);

    const { callback, cookie } = await throughProvider('ivy', '/console');
    const done = await request(t.http).get(callback).set('Cookie', cookie).expect(302);
    expect(done.headers.location).toBe('/console');
    const session = await request(t.http).get('/v1/auth/session').set('Cookie', sessionCookieOf(done.headers['set-cookie'])).expect(200);
    expect(session.body.user).toEqual({
      id: expect.any(String),
      email: 'ivy@studio.test',
      name: 'Ivy Invited',
      emailVerified: true,
      reviewMail: true,
    });
    expect(session.body.organizations).toEqual([{ id: org.id, name: expect.any(String), role: 'viewer' }]);
    const { rows } = await t.db.query(`SELECT password_hash FROM users WHERE email = 'ivy@studio.test'`);
    expect(rows).toEqual([{ password_hash: null }]);
    expect((await asSession(t, boss, org.id).get('/organization/invitations').expect(200)).body).toEqual([]);
  });

  it('refuses a stranger with a page that says so, signing no one in and creating nothing', async () => {
    const { callback, cookie } = await throughProvider('stranger');
    const refused = await request(t.http).get(callback).set('Cookie', cookie).expect(403);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toContain('There is no Flagstore account for stranger@elsewhere.test');
    expect(refused.text).toContain('href="/console"');
    expect(cookiePairsOf(refused.headers['set-cookie'])).not.toContain('flagstore_session');
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM users WHERE email = 'stranger@elsewhere.test'`);
    expect(rows[0].n).toBe(0);
  });

  it('refuses an email the provider has not verified, even of an existing user', async () => {
    await createUser(t, { email: 'unverified@studio.test' });
    const { callback, cookie } = await throughProvider('unverified');
    const refused = await request(t.http).get(callback).set('Cookie', cookie).expect(403);
    expect(refused.text).toContain('has not verified the email unverified@studio.test');
  });

  it('refuses a tampered state, and a callback without the pending sign-in of this browser', async () => {
    const { callback, cookie } = await throughProvider('ada');
    const tampered = callback.replace(/state=([^&]+)/, 'state=forged-state');
    const refused = await request(t.http).get(tampered).set('Cookie', cookie).expect(400);
    expect(refused.text).toContain('not started from this browser');
    // The real callback, but from a browser that did not start it.
    const elsewhere = await request(t.http).get(callback).expect(400);
    expect(elsewhere.text).toContain('not started from this browser');
    expect(cookiePairsOf(elsewhere.headers['set-cookie'])).not.toContain('flagstore_session=');
  });

  it('refuses an expired code', async () => {
    const { callback, cookie } = await throughProvider('ada');
    await provider.setClockOffset(61);
    try {
      const refused = await request(t.http).get(callback).set('Cookie', cookie).expect(400);
      expect(refused.text).toContain('no longer accepts this sign-in');
    } finally {
      await provider.setClockOffset(0);
    }
  });

  it('sends a returnTo off this service to /console instead', async () => {
    const { callback, cookie } = await throughProvider('ada', 'https://evil.example/steal');
    const done = await request(t.http).get(callback).set('Cookie', cookie).expect(302);
    expect(done.headers.location).toBe('/console');
  });

  it('says single sign-on is off where it is not configured', async () => {
    const plain = await createTestApp();
    try {
      await request(plain.http).get('/v1/auth/methods').expect(200, { password: true, sso: false, passwordReset: false });
      const off = await request(plain.http).get('/v1/auth/sso').expect(404);
      expect(off.text).toContain('Single sign-on is not configured');
      await request(plain.http).get('/v1/auth/sso/callback?code=x&state=y').expect(404);
    } finally {
      await plain.close();
    }
  });
});
