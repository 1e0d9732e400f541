import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Outbox } from '../../src/outbox/outbox';
import { createOrganization } from '../factories/organizations.factory';
import { asSession, createUser, memberSignedIn, PASSWORD, SignedIn, signIn } from '../factories/people.factory';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { signInAtProvider } from '../support/oidc-browser';
import { OidcTestProvider, startOidcProvider } from '../support/servers/oidc-provider';
import { ReceivedMail, startSmtpServer, SmtpTestServer } from '../support/servers/smtp-server';
import { createTestApp, TestApp } from '../support/test-app';

// Decisions, "Trust": Mail (invitations by mail), Password reset and verification, Proof of an email. Against a real
// SMTP server on loopback; the apps run on a FakeClock, so a mail goes out when the test calls Outbox.deliverDue.
const FROM = 'Flagstore <flags@studio.example>';
const PUBLIC_URL = 'http://flagstore.test';
const NEW_PASSWORD = 'a brand new passphrase';

/** The text of a mail's body, quoted-printable undone (long lines are folded with a trailing `=`). */
const textOf = (mail: ReceivedMail) =>
  mail.body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
/** The console link of `kind` a mail carries, and its token. */
function linkIn(mail: ReceivedMail, kind: 'invitations' | 'password-reset' | 'verify-email'): { url: string; token: string } {
  const match = new RegExp(`${PUBLIC_URL}/console/${kind}/([A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])`).exec(textOf(mail));
  if (!match) throw new Error(`No ${kind} link in the mail:\n${textOf(mail)}`);
  return { url: match[0], token: match[1] };
}

describe('what the service mails: invitations, password reset, email verification', () => {
  let smtp: SmtpTestServer;
  const clock = new FakeClock();
  let t: TestApp;
  let b: TestApp;
  let off: TestApp;
  const deliverDue = () => t.app.get(Outbox).deliverDue();
  /** Sends what is due, and answers the mails that arrived since `before` mails. */
  async function mailsAfter(before: number, count = 1): Promise<ReceivedMail[]> {
    await deliverDue();
    await smtp.waitFor(before + count);
    return smtp.received.slice(before);
  }
  const outboxTo = async (email: string) =>
    (await t.db.query(`SELECT state FROM outbox WHERE channel = 'mail' AND payload->>'to' = $1`, [email])).rows as { state: string }[];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const env = { PUBLIC_URL, SMTP_URL: smtp.url, MAIL_FROM: FROM, SIGN_IN_FAILURES_PER_MINUTE: '1000' };
    t = await createTestApp(env, { clock });
    b = await createTestApp(env, { clock, sameDatabaseAs: t });
    off = await createTestApp({ PUBLIC_URL });
  });
  afterAll(async () => {
    await off?.close();
    await b?.close();
    await t?.close();
    await smtp?.close();
  });
  beforeEach(async () => {
    smtp.mode = 'accept';
    await deliverDue(); // what an earlier test left pending goes out before this one counts mails
  });

  describe('invitations', () => {
    it('mails the link to the invited address only, answers no url, shows the delivery, and its acceptor is verified', async () => {
      const org = await createOrganization(t, 'Mailed Studio');
      const alice = await memberSignedIn(t, org.id, 'admin');
      const before = smtp.received.length;
      const created = await asSession(t, alice, org.id)
        .post('/organization/invitations')
        .send({ email: 'sam@mail.example', role: 'editor' })
        .expect(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        email: 'sam@mail.example',
        role: 'editor',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        delivery: { state: 'pending', attempts: 0 },
      });
      const listedBefore = await asSession(t, alice, org.id).get('/organization/invitations').expect(200);
      expect(listedBefore.body).toEqual([{ ...created.body, delivery: { state: 'pending', attempts: 0 } }]);

      const [mail] = await mailsAfter(before);
      expect(mail.envelope).toEqual({ from: 'flags@studio.example', to: ['sam@mail.example'] });
      expect(mail.subject).toBe('Your invitation to Mailed Studio on Flagstore');
      const { token } = linkIn(mail, 'invitations');
      const stored = await t.db.query('SELECT mail_id IS NOT NULL AS mailed FROM invitations WHERE id = $1', [created.body.id]);
      expect(stored.rows).toEqual([{ mailed: true }]);
      const listed = await asSession(t, alice, org.id).get('/organization/invitations').expect(200);
      expect(listed.body).toEqual([{ ...created.body, delivery: { state: 'sent', attempts: 1 } }]);

      const accepted = await request(t.http).post(`/v1/auth/invitations/${token}/accept`).send({ name: 'Sam', password: PASSWORD }).expect(200);
      expect(accepted.body.user).toEqual({ id: expect.any(String), email: 'sam@mail.example', name: 'Sam', emailVerified: true, reviewMail: true });
      expect(accepted.body.organizations).toEqual([{ id: org.id, name: 'Mailed Studio', role: 'editor' }]);
    });

    it('sends nothing for an invitation whose transaction rolls back after the mail was written', async () => {
      const org = await createOrganization(t, 'Rollback Studio');
      const alice = await memberSignedIn(t, org.id, 'admin');
      // Recording the mail on the invitation fails for this one address: the mail row was written in the same transaction.
      await t.db.query(`
        CREATE FUNCTION refuse_rollback_mail() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.email = 'rollback@mail.example' AND NEW.mail_id IS NOT NULL THEN RAISE EXCEPTION 'refused by the test'; END IF;
          RETURN NEW;
        END $$`);
      await t.db.query(`CREATE TRIGGER refuse_rollback_mail BEFORE UPDATE ON invitations FOR EACH ROW EXECUTE FUNCTION refuse_rollback_mail()`);
      try {
        await asSession(t, alice, org.id).post('/organization/invitations').send({ email: 'rollback@mail.example', role: 'viewer' }).expect(500);
      } finally {
        await t.db.query('DROP TRIGGER refuse_rollback_mail ON invitations');
        await t.db.query('DROP FUNCTION refuse_rollback_mail()');
      }
      await deliverDue();
      expect(await outboxTo('rollback@mail.example')).toEqual([]);
      expect(smtp.received.filter((mail) => mail.envelope.to.includes('rollback@mail.example'))).toEqual([]);
      expect((await asSession(t, alice, org.id).get('/organization/invitations').expect(200)).body).toEqual([]);
    });

    it('resends with a new link (the old one stops working), and shows a mail the server refused as failed', async () => {
      const org = await createOrganization(t, 'Resend Studio');
      const alice = await memberSignedIn(t, org.id, 'admin');
      smtp.mode = 'refuse-recipients';
      const created = await asSession(t, alice, org.id)
        .post('/organization/invitations')
        .send({ email: 'rex@mail.example', role: 'viewer' })
        .expect(201);
      await deliverDue();
      const failed = await asSession(t, alice, org.id).get('/organization/invitations').expect(200);
      expect(failed.body).toEqual([{ ...created.body, delivery: { state: 'failed', attempts: 1, lastError: expect.stringMatching(/550/) } }]);

      smtp.mode = 'accept';
      const before = smtp.received.length;
      clock.advance(60_000);
      const resent = await asSession(t, alice, org.id).post(`/organization/invitations/${created.body.id}/resend`).expect(200);
      expect(resent.body).toEqual({
        ...created.body,
        expiresAt: new Date(clock.now() + 7 * 24 * 3_600_000).toISOString(),
        delivery: { state: 'pending', attempts: 0 },
      });
      const [first] = await mailsAfter(before);
      const oldToken = linkIn(first, 'invitations').token;

      const again = smtp.received.length;
      await asSession(t, alice, org.id).post(`/organization/invitations/${created.body.id}/resend`).expect(200);
      const [second] = await mailsAfter(again);
      expect(second.envelope.to).toEqual(['rex@mail.example']);
      const newToken = linkIn(second, 'invitations').token;
      expect(newToken).not.toBe(oldToken);
      expectApiError(
        await request(t.http).post(`/v1/auth/invitations/${oldToken}/accept`).send({ name: 'Rex', password: PASSWORD }),
        404,
        'INVITATION_NOT_FOUND',
      );
      await request(t.http).post(`/v1/auth/invitations/${newToken}/accept`).send({ name: 'Rex', password: PASSWORD }).expect(200);

      expectApiError(await asSession(t, alice, org.id).post(`/organization/invitations/${created.body.id}/resend`), 404, 'INVITATION_NOT_FOUND');
      // Another organization's admin cannot resend it.
      const other = await createOrganization(t, 'Other Studio');
      const olga = await memberSignedIn(t, other.id, 'admin');
      const pending = await asSession(t, alice, org.id)
        .post('/organization/invitations')
        .send({ email: 'pat@mail.example', role: 'viewer' })
        .expect(201);
      expectApiError(await asSession(t, olga, other.id).post(`/organization/invitations/${pending.body.id}/resend`), 404, 'INVITATION_NOT_FOUND');
      const editor = await memberSignedIn(t, org.id, 'editor');
      await asSession(t, editor, org.id).post(`/organization/invitations/${pending.body.id}/resend`).expect(403);
    });

    it('with mail off: the answer carries the url as before, the acceptor stays unverified, resend is 404 MAIL_OFF', async () => {
      const org = await createOrganization(off, 'Unmailed Studio');
      const alice = await memberSignedIn(off, org.id, 'admin');
      const created = await asSession(off, alice, org.id)
        .post('/organization/invitations')
        .send({ email: 'una@mail.example', role: 'viewer' })
        .expect(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        email: 'una@mail.example',
        role: 'viewer',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        url: expect.stringMatching(new RegExp(`^${PUBLIC_URL}/console/invitations/[A-Za-z0-9_-]{43}$`)),
      });
      const { url, ...listed } = created.body;
      expect((await asSession(off, alice, org.id).get('/organization/invitations').expect(200)).body).toEqual([listed]);
      expectApiError(await asSession(off, alice, org.id).post(`/organization/invitations/${created.body.id}/resend`), 404, 'MAIL_OFF', /SMTP_URL/);
      const accepted = await request(off.http)
        .post(`/v1/auth/invitations/${url.split('/').pop()}/accept`)
        .send({ name: 'Una', password: PASSWORD })
        .expect(200);
      expect(accepted.body.user.emailVerified).toBe(false);
    });
  });

  describe('password reset', () => {
    /** A user with PASSWORD whose email is not verified (as one made through a shown invitation link). */
    async function unverifiedUser(email: string) {
      const user = await createUser(t, { email });
      await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.id]);
      return user;
    }
    async function resetLinkFor(email: string): Promise<string> {
      const before = smtp.received.length;
      const answer = await request(t.http).post('/v1/auth/password-reset').send({ email }).expect(202);
      expect(answer.headers['cache-control']).toBe('no-store');
      const [mail] = await mailsAfter(before);
      return linkIn(mail, 'password-reset').token;
    }

    it('mails a link to the account (any spelling of its email) that sets the password, ends every session, and verifies the email', async () => {
      const user = await unverifiedUser('Rita.Reset@mail.example');
      await request(t.http).post('/v1/auth/login').send({ email: 'rita.reset@mail.example', password: PASSWORD }).expect(200);
      const onA = await signIn(t, user.email);
      const onB = await signIn(b, user.email);
      await asSession(b, onB).get('/auth/session').expect(200);

      const before = smtp.received.length;
      const answer = await request(t.http).post('/v1/auth/password-reset').send({ email: '  RITA.RESET@MAIL.EXAMPLE ' }).expect(202);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.text).toBe('');
      const [mail] = await mailsAfter(before);
      expect(mail.envelope.to).toEqual([user.email]);
      expect(mail.subject).toBe('Reset your Flagstore password');
      const { token } = linkIn(mail, 'password-reset');
      const stored = await t.db.query('SELECT token_hash FROM email_tokens WHERE user_id = $1', [user.id]);
      expect(stored.rows).toHaveLength(1);
      expect(stored.rows[0].token_hash).not.toContain(token); // only its hash

      // A password outside 12-256 characters is refused, and the link still works afterwards.
      expectApiError(
        await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: 'short' }),
        400,
        'VALIDATION_ERROR',
        /newPassword/,
      );
      const reset = await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: NEW_PASSWORD }).expect(204);
      expect(reset.headers['cache-control']).toBe('no-store');

      await asSession(t, onA).get('/auth/session').expect(401);
      await eventually(async () => (await asSession(b, onB).get('/auth/session')).status === 401, {
        timeoutMs: 1500,
        what: 'the session ending on b',
      });
      await request(t.http).post('/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(401);
      const fresh = await signIn(t, user.email, NEW_PASSWORD);
      expect(fresh.body.user.emailVerified).toBe(true);
      expect(fresh.body.organizations).toEqual([]);

      // Single use.
      expectApiError(
        await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: 'yet another passphrase' }),
        410,
        'LINK_USED',
      );
      await signIn(t, user.email, NEW_PASSWORD);
    });

    it('spends every other link of the account when one sets the password', async () => {
      const user = await unverifiedUser('two-links@mail.example');
      const first = await resetLinkFor(user.email);
      const second = await resetLinkFor(user.email);
      await request(t.http).post(`/v1/auth/password-reset/${second}`).send({ newPassword: NEW_PASSWORD }).expect(204);
      // A link mailed before the reset no longer sets a password (nor after a single sign-on takeover: sso.service).
      expectApiError(
        await request(t.http).post(`/v1/auth/password-reset/${first}`).send({ newPassword: 'yet another passphrase' }),
        410,
        'LINK_USED',
      );
      await signIn(t, user.email, NEW_PASSWORD);
    });

    it('answers 202 for an email without an account, and mails nothing', async () => {
      const answer = await request(t.http).post('/v1/auth/password-reset').send({ email: 'nobody-here@mail.example' }).expect(202);
      expect(answer.headers['cache-control']).toBe('no-store');
      await deliverDue();
      expect(await outboxTo('nobody-here@mail.example')).toEqual([]);
      expect(smtp.received.filter((mail) => mail.envelope.to.includes('nobody-here@mail.example'))).toEqual([]);
      expectApiError(await request(t.http).post('/v1/auth/password-reset').send({ email: 'not an email' }), 400, 'VALIDATION_ERROR', /email/);
    });

    it('of two uses of one link at once, exactly one wins', async () => {
      const user = await createUser(t, { email: 'twice@mail.example' });
      const token = await resetLinkFor(user.email);
      const answers = await Promise.all(
        ['first passphrase here', 'second passphrase here'].map((newPassword) =>
          request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([204, 410]);
      const winner = answers[0].status === 204 ? 'first passphrase here' : 'second passphrase here';
      await signIn(t, user.email, winner);
    });

    it('a link works for an hour; an unknown or malformed one is 404', async () => {
      const user = await createUser(t, { email: 'late@mail.example' });
      const token = await resetLinkFor(user.email);
      clock.advance(3_600_000);
      expectApiError(await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: NEW_PASSWORD }), 410, 'LINK_USED', /expired/);
      const second = await resetLinkFor(user.email);
      clock.advance(3_600_000 - 1000);
      await request(t.http).post(`/v1/auth/password-reset/${second}`).send({ newPassword: NEW_PASSWORD }).expect(204);

      const unknown = 'A'.repeat(43);
      expectApiError(await request(t.http).post(`/v1/auth/password-reset/${unknown}`).send({ newPassword: NEW_PASSWORD }), 404, 'LINK_NOT_FOUND');
      expectApiError(await request(t.http).post('/v1/auth/password-reset/short').send({ newPassword: NEW_PASSWORD }), 404, 'LINK_NOT_FOUND');
      await signIn(t, user.email, NEW_PASSWORD);
    });

    it('with mail off: both routes answer 404 MAIL_OFF, and the sign-in page is told', async () => {
      const user = await createUser(off, { email: 'offline@mail.example' });
      expectApiError(await request(off.http).post('/v1/auth/password-reset').send({ email: user.email }), 404, 'MAIL_OFF', /SMTP_URL/);
      expectApiError(
        await request(off.http)
          .post(`/v1/auth/password-reset/${'A'.repeat(43)}`)
          .send({ newPassword: NEW_PASSWORD }),
        404,
        'MAIL_OFF',
      );
      await request(off.http).get('/v1/auth/methods').expect(200, { password: true, sso: false, passwordReset: false });
      await request(t.http).get('/v1/auth/methods').expect(200, { password: true, sso: false, passwordReset: true });
      const signedIn = await signIn(off, user.email);
      expectApiError(await asSession(off, signedIn).post('/auth/verify-email'), 404, 'MAIL_OFF');
      expectApiError(await asSession(off, signedIn).post(`/auth/verify-email/${'A'.repeat(43)}`), 404, 'MAIL_OFF');
    });
  });

  describe('email verification', () => {
    it('mails a link to the signed-in user’s own email; opening it signed in as that user verifies the email, once', async () => {
      const user = await createUser(t, { email: 'vera@mail.example' });
      await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.id]);
      const vera: SignedIn = await signIn(t, user.email);
      expect(vera.body.user.emailVerified).toBe(false);
      await asSession(t, vera, undefined, { csrf: false }).post('/auth/verify-email').expect(403);
      await request(t.http).post('/v1/auth/verify-email').expect(401);

      const before = smtp.received.length;
      await asSession(t, vera).post('/auth/verify-email').expect(202);
      const [mail] = await mailsAfter(before);
      expect(mail.envelope.to).toEqual(['vera@mail.example']);
      const { token } = linkIn(mail, 'verify-email');
      expectApiError(await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: NEW_PASSWORD }), 404, 'LINK_NOT_FOUND');

      // Whoever reads the mail without the account's session proves nothing about who holds the account (issue "Trust":
      // an invitation link's holder asks for the link, the mailbox's owner opens it): refused, and the link stays good.
      await request(t.http).post(`/v1/auth/verify-email/${token}`).expect(401);
      const other = await signIn(t, (await createUser(t, { email: 'not-vera@mail.example' })).email);
      expectApiError(await asSession(t, other).post(`/auth/verify-email/${token}`), 403, 'LINK_NOT_YOURS');
      await asSession(t, vera, undefined, { csrf: false }).post(`/auth/verify-email/${token}`).expect(403);
      expect((await asSession(t, vera).get('/auth/session').expect(200)).body.user.emailVerified).toBe(false);

      await asSession(t, vera).post(`/auth/verify-email/${token}`).expect(204);
      expect((await asSession(t, vera).get('/auth/session').expect(200)).body.user.emailVerified).toBe(true);
      expectApiError(await asSession(t, vera).post(`/auth/verify-email/${token}`), 410, 'LINK_USED');
      expectApiError(await asSession(t, vera).post('/auth/verify-email'), 409, 'EMAIL_ALREADY_VERIFIED');
      expectApiError(await asSession(t, vera).post(`/auth/verify-email/${'B'.repeat(43)}`), 404, 'LINK_NOT_FOUND');
    });

    it('a verification link expires after 24 hours', async () => {
      const user = await createUser(t, { email: 'slow-vera@mail.example' });
      await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.id]);
      const vera = await signIn(t, user.email);
      const before = smtp.received.length;
      await asSession(t, vera).post('/auth/verify-email').expect(202);
      const { token } = linkIn((await mailsAfter(before))[0], 'verify-email');
      clock.advance(24 * 3_600_000);
      // A day later the session has gone idle too: signed in afresh, the link has expired.
      const later = await signIn(t, user.email);
      expectApiError(await asSession(t, later).post(`/auth/verify-email/${token}`), 410, 'LINK_USED', /expired/);
    });
  });
});

describe('password reset requests share the sign-in budget of the client address', () => {
  let smtp: SmtpTestServer;
  let t: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({ PUBLIC_URL, SMTP_URL: smtp.url, MAIL_FROM: FROM, SIGN_IN_FAILURES_PER_MINUTE: '5' }, { clock: new FakeClock() });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers 429 with Retry-After once an address has spent it, whatever the emails', async () => {
    for (let i = 0; i < 5; i += 1)
      await request(t.http)
        .post('/v1/auth/password-reset')
        .send({ email: `burst-${i}@mail.example` })
        .expect(202);
    const refused = await request(t.http).post('/v1/auth/password-reset').send({ email: 'burst-5@mail.example' });
    expectApiError(refused, 429, 'RATE_LIMITED', /address/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Bad links spend the same budget.
    expectApiError(
      await request(t.http)
        .post(`/v1/auth/password-reset/${'C'.repeat(43)}`)
        .send({ newPassword: NEW_PASSWORD }),
      429,
      'RATE_LIMITED',
    );
    expect((await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'to' = 'burst-5@mail.example'`)).rows).toEqual([{ n: 0 }]);
  });
});

// Decisions, "Proof of an email": a reset link read at the address verifies it, so that single sign-on with that
// email later signs into the account (and keeps the password the person chose) instead of taking it over.
describe('a password reset verifies the email: single sign-on then signs in rather than taking the account over', () => {
  const client = { clientId: 'flagstore', clientSecret: randomBytes(24).toString('base64url'), redirectUri: `${PUBLIC_URL}/v1/auth/sso/callback` };
  let provider: OidcTestProvider;
  let smtp: SmtpTestServer;
  let t: TestApp;
  const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
  const cookiesOf = (setCookie: string[] | string | undefined) =>
    ([] as string[])
      .concat(setCookie ?? [])
      .map((header) => header.split(';')[0])
      .join('; ');

  beforeAll(async () => {
    provider = await startOidcProvider({ client, accounts: [{ sub: 'rosa', email: 'rosa@mail.example', email_verified: true, name: 'Rosa' }] });
    smtp = await startSmtpServer();
    t = await createTestApp({
      PUBLIC_URL,
      SMTP_URL: smtp.url,
      MAIL_FROM: FROM,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: client.clientId,
      OIDC_CLIENT_SECRET: client.clientSecret,
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await provider?.stop();
  });

  it('keeps the password set through the link, and the sessions it opens, once the provider vouches for the email', async () => {
    const rosa = await createUser(t, { email: 'rosa@mail.example', name: 'Rosa' });
    await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [rosa.id]); // as if made through a shown link
    await request(t.http).post('/v1/auth/password-reset').send({ email: 'rosa@mail.example' }).expect(202);
    const { token } = linkIn((await smtp.waitFor(1))[0], 'password-reset');
    await request(t.http).post(`/v1/auth/password-reset/${token}`).send({ newPassword: NEW_PASSWORD }).expect(204);
    const byPassword = await signIn(t, 'rosa@mail.example', NEW_PASSWORD);
    expect(byPassword.body.user.emailVerified).toBe(true);

    const started = await request(t.http).get('/v1/auth/sso?returnTo=%2Fconsole%2Fflags').expect(302);
    const callback = pathOf(await signInAtProvider(started.headers.location, { login: 'rosa' }));
    const landing = await request(t.http).get(callback).set('Cookie', cookiesOf(started.headers['set-cookie']));
    expect(landing.status).toBe(302); // signed in, not taken over (that answers a page saying so)
    expect(landing.headers.location).toBe('/console/flags');
    await asSession(t, byPassword).get('/auth/session').expect(200);
    await signIn(t, 'rosa@mail.example', NEW_PASSWORD);
  });
});
