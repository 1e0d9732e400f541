import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { admin, createOrganization } from '../factories/organizations.factory';
import { asSession, createUser, memberSignedIn, PASSWORD, sessionCookieOf, SignedIn, signIn } from '../factories/people.factory';
import { TAKEN_OVER_NOTICE } from '../../src/people/sso.service';
import { eventually } from '../support/eventually';
import { callbackPathOf, cookiePairsOf, signInAtProvider } from '../support/oidc-browser';
import { OidcTestProvider, startOidcProvider } from '../support/servers/oidc-provider';
import { createTestApp, TestApp } from '../support/test-app';

// Decisions, "Proof of an email": single sign-on links an identity by the provider's iss and sub, and its first
// sign-in with a verified email takes an unverified account (one made through an invitation link) over.
const PUBLIC_URL = 'http://flagstore.test';
const client = {
  clientId: 'flagstore',
  clientSecret: randomBytes(24).toString('base64url'),
  redirectUri: `${PUBLIC_URL}/v1/auth/sso/callback`,
};
const DAVES_PASSWORD = 'dave chose this for frank';

const tokenOf = (url: string) => url.split('/').pop()!;

describe('single sign-on links identities, and takes over an account made through an invitation link', () => {
  let provider: OidcTestProvider;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    provider = await startOidcProvider({
      client,
      accounts: [
        { sub: 'frank', email: 'frank@a.example', email_verified: true, name: 'Frank (at the provider)' },
        { sub: 'gina', email: 'gina@studio.test', email_verified: true, name: 'Gina' },
        { sub: 'gina-impostor', email: 'gina@studio.test', email_verified: true, name: 'Not Gina' },
        { sub: 'ola', email: 'ola@studio.test', email_verified: true, name: 'Ola' },
      ],
    });
    const env = { PUBLIC_URL, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: client.clientId, OIDC_CLIENT_SECRET: client.clientSecret };
    a = await createTestApp(env);
    b = await createTestApp(env, { sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await provider?.stop();
  });

  /** A whole single sign-on on instance `a` as the provider's account `login`: the callback's answer. */
  async function singleSignOn(login: string): Promise<request.Response> {
    const started = await request(a.http).get('/v1/auth/sso?returnTo=%2Fconsole%2Fflags').expect(302);
    const callback = callbackPathOf(await signInAtProvider(started.headers.location, { login }));
    return request(a.http).get(callback).set('Cookie', cookiePairsOf(started.headers['set-cookie']));
  }

  async function sessionOf(answer: request.Response): Promise<SignedIn> {
    const cookie = sessionCookieOf(answer.headers['set-cookie']);
    const session = await request(a.http).get('/v1/auth/session').set('Cookie', cookie).expect(200);
    return { userId: session.body.user.id, email: session.body.user.email, cookie, csrfToken: session.body.csrfToken, body: session.body };
  }

  const identitiesOf = async (userId: string) =>
    (await a.db.query('SELECT issuer, subject FROM user_identities WHERE user_id = $1 ORDER BY subject', [userId])).rows;

  it("issue 32's scenario: Dave's account for frank is taken over by the real Frank, and Dave's password never reaches A's flags", async () => {
    const orgA = await createOrganization(a, 'A');
    const orgB = await createOrganization(a, 'B');
    const alice = await memberSignedIn(a, orgA.id, 'admin');
    const dave = await memberSignedIn(a, orgB.id, 'admin');
    await asSession(a, alice, orgA.id).post('/flags').send({ key: 'a_secret', name: 'A secret', type: 'boolean', value: true }).expect(201);

    // Dave invites frank to B and accepts the link himself, with a password of his own.
    const toB = await asSession(a, dave, orgB.id).post('/organization/invitations').send({ email: 'frank@a.example', role: 'editor' }).expect(201);
    const accepted = await request(a.http)
      .post(`/v1/auth/invitations/${tokenOf(toB.body.url)}/accept`)
      .send({ name: 'Frank', password: DAVES_PASSWORD })
      .expect(200);
    expect(accepted.body.user).toMatchObject({ id: expect.any(String), email: 'frank@a.example', name: 'Frank' });
    const accountId: string = accepted.body.user.id;
    const davesSession: SignedIn = {
      userId: accountId,
      email: 'frank@a.example',
      cookie: sessionCookieOf(accepted.headers['set-cookie']),
      csrfToken: accepted.body.csrfToken,
      body: accepted.body,
    };

    // Alice invites frank to A. Until Frank signs in, Dave's password still signs in (unverified accounts keep
    // theirs), but reaches only B.
    await asSession(a, alice, orgA.id).post('/organization/invitations').send({ email: 'frank@a.example', role: 'viewer' }).expect(201);
    const davesSecondSession = await signIn(a, 'frank@a.example', DAVES_PASSWORD);
    await asSession(a, davesSecondSession, orgA.id).get('/flags').expect(403);
    await asSession(b, davesSession, orgA.id).get('/flags').expect(403);
    await asSession(b, davesSession, orgB.id).get('/flags').expect(200); // B now holds the session in memory

    // The real Frank signs in by single sign-on.
    const landing = await singleSignOn('frank');

    // Dave: signed out on both instances (B within the bus's delay), his password no longer signs in, A never reached.
    await asSession(a, davesSession, orgA.id).get('/flags').expect(401);
    await asSession(a, davesSecondSession, orgA.id).get('/flags').expect(401);
    await eventually(async () => (await asSession(b, davesSession, orgB.id).get('/flags')).status === 401, {
      timeoutMs: 1000,
      what: "Dave's session ending on B",
    });
    await asSession(b, davesSession, orgA.id).get('/flags').expect(401);
    await request(a.http).post('/v1/auth/login').send({ email: 'frank@a.example', password: DAVES_PASSWORD }).expect(401);
    await request(b.http).post('/v1/auth/login').send({ email: 'frank@a.example', password: DAVES_PASSWORD }).expect(401);

    // Made through an invitation link: unverified until the takeover.
    expect(accepted.body.user.emailVerified).toBe(false);
    // Frank: told what happened, signed in to the same account, a member of A (Alice's invitation) and of B.
    expect(landing.status).toBe(200);
    expect(landing.headers['content-type']).toMatch(/^text\/html/);
    expect(landing.headers['cache-control']).toBe('no-store');
    expect(landing.text).toContain(TAKEN_OVER_NOTICE);
    expect(landing.text).toContain('<a href="/console/flags">Continue</a>');
    const frank = await sessionOf(landing);
    expect(frank.body.user).toEqual({ id: accountId, email: 'frank@a.example', name: 'Frank', emailVerified: true, reviewMail: true });
    expect(frank.body.organizations).toEqual([
      { id: orgA.id, name: 'A', role: 'viewer' },
      { id: orgB.id, name: 'B', role: 'editor' },
    ]);
    const flags = await asSession(a, frank, orgA.id).get('/flags').expect(200);
    expect(flags.body.results.map((flag: { key: string }) => flag.key)).toEqual(['a_secret']);
    expect((await asSession(a, alice, orgA.id).get('/organization/invitations').expect(200)).body).toEqual([]);
    expect(await identitiesOf(accountId)).toEqual([{ issuer: provider.issuer, subject: 'frank' }]);
    const { rows } = await a.db.query('SELECT password_hash, email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1', [accountId]);
    expect(rows).toEqual([{ password_hash: null, verified: true }]);

    // Frank's next sign-in is an ordinary one: straight to where it started, no notice.
    const again = await singleSignOn('frank');
    expect(again.status).toBe(302);
    expect(again.headers.location).toBe('/console/flags');
    await asSession(a, frank, orgA.id).get('/flags').expect(200); // the first one goes on
  });

  it('signs a verified account in and links it, without taking it over: its password and other sessions stay', async () => {
    const ola = await createUser(a, { email: 'ola@studio.test', name: 'Ola' });
    expect(ola).toMatchObject({ emailVerified: true }); // operator-made
    const byPassword = await signIn(a, 'ola@studio.test');

    const landing = await singleSignOn('ola');
    expect(landing.status).toBe(302);
    await request(a.http).get('/v1/auth/session').set('Cookie', byPassword.cookie).expect(200);
    await signIn(a, 'ola@studio.test', PASSWORD);
    expect(await identitiesOf(ola.id)).toEqual([{ issuer: provider.issuer, subject: 'ola' }]);
    expect((await sessionOf(landing)).body.user).toEqual({
      id: ola.id,
      email: 'ola@studio.test',
      name: 'Ola',
      emailVerified: true,
      reviewMail: true,
    });
  });

  it("keeps signing the linked identity into its account when its email changes at the provider, even to another account's email", async () => {
    const gina = await createUser(a, { email: 'gina@studio.test', name: 'Gina', password: null });
    const henry = await createUser(a, { email: 'henry@studio.test', name: 'Henry' });
    const org = await createOrganization(a);
    const boss = await memberSignedIn(a, org.id, 'admin');
    expect((await singleSignOn('gina')).status).toBe(302);
    expect(await identitiesOf(gina.id)).toEqual([{ issuer: provider.issuer, subject: 'gina' }]);

    try {
      await provider.setAccount({ sub: 'gina', email: 'gina.renamed@studio.test', email_verified: true });
      const renamed = await singleSignOn('gina');
      expect(renamed.status).toBe(302);
      expect((await sessionOf(renamed)).body.user).toMatchObject({ id: gina.id, email: 'gina@studio.test' });

      // Henry's email, and a pending invitation for it: still Gina's account, and Henry's invitation stays his.
      await asSession(a, boss, org.id).post('/organization/invitations').send({ email: 'henry@studio.test', role: 'editor' }).expect(201);
      await provider.setAccount({ sub: 'gina', email: 'henry@studio.test', email_verified: true });
      const asHenrysEmail = await singleSignOn('gina');
      expect(asHenrysEmail.status).toBe(302);
      const session = await sessionOf(asHenrysEmail);
      expect(session.body.user).toMatchObject({ id: gina.id, email: 'gina@studio.test' });
      expect(session.body.organizations).toEqual([]);
      expect((await asSession(a, boss, org.id).get('/organization/invitations').expect(200)).body).toEqual([
        expect.objectContaining({ email: 'henry@studio.test' }),
      ]);
      expect(await identitiesOf(henry.id)).toEqual([]);

      // The email no longer matters at all: not even whether the provider has verified it.
      await provider.setAccount({ sub: 'gina', email: 'gina.unconfirmed@studio.test', email_verified: false });
      const unconfirmed = await singleSignOn('gina');
      expect(unconfirmed.status).toBe(302);
      expect((await sessionOf(unconfirmed)).body.user.id).toBe(gina.id);
    } finally {
      await provider.setAccount({ sub: 'gina', email: 'gina@studio.test', email_verified: true, name: 'Gina' });
    }
  });

  it('refuses another identity with the email of an account linked to a different one: a page says so, nothing is linked', async () => {
    const gina = (await a.db.query(`SELECT id FROM users WHERE email = 'gina@studio.test' AND deleted_at IS NULL`)).rows[0] as { id: string };
    expect(await identitiesOf(gina.id)).toEqual([{ issuer: provider.issuer, subject: 'gina' }]);
    const refused = await singleSignOn('gina-impostor');
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toContain('The Flagstore account for gina@studio.test is linked to another account at your sign-in provider');
    expect(cookiePairsOf(refused.headers['set-cookie'])).not.toContain('flagstore_session=');
    expect((await a.db.query(`SELECT count(*)::int AS n FROM user_identities WHERE subject = 'gina-impostor'`)).rows[0].n).toBe(0);
  });

  it('links an identity whose account was deleted to the new account with that email', async () => {
    const first = await createUser(a, { email: 'ola.again@studio.test', name: 'Ola again' });
    await provider.setAccount({ sub: 'ola-again', email: 'ola.again@studio.test', email_verified: true });
    expect((await singleSignOn('ola-again')).status).toBe(302);
    await admin(a).delete(`/users/${first.id}`).expect(204);
    const second = await createUser(a, { email: 'ola.again@studio.test', name: 'Ola, new account' });
    const landing = await singleSignOn('ola-again');
    expect(landing.status).toBe(302);
    expect((await sessionOf(landing)).body.user.id).toBe(second.id);
    expect(await identitiesOf(second.id)).toEqual([{ issuer: provider.issuer, subject: 'ola-again' }]);
  });
});
