import request from 'supertest';
import { createOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, PASSWORD, signIn } from '../factories/people.factory';
import { ReceivedMail, startSmtpServer, SmtpTestServer } from '../support/servers/smtp-server';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';

/** The text of a mail's body, quoted-printable undone. */
const textOf = (mail: ReceivedMail) =>
  mail.body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
function linkIn(mail: ReceivedMail, kind: string): string {
  const match = new RegExp(`https?://[^\\s/]+/console/${kind}/[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])`).exec(textOf(mail));
  if (!match) throw new Error(`No ${kind} link in the mail:\n${textOf(mail)}`);
  return match[0];
}

/**
 * The console with mail on, in Chromium, against a real SMTP server on loopback (the app on the real clock sends its
 * mail by itself): a forgotten password reset through the mailed link, invitations that are mailed and resent, and
 * an email verified through its link.
 */
describe('the console with mail on (Chromium, a real SMTP server)', () => {
  let chromium: ConsoleBrowser;
  let smtp: SmtpTestServer;
  let t: TestApp;
  const open = (path?: string) => chromium.open(t.config.urls.publicUrl, { path });
  const mailTo = async (email: string, count = 1): Promise<ReceivedMail> => {
    for (;;) {
      const mails = smtp.received.filter((mail) => mail.envelope.to.includes(email));
      if (mails.length >= count) return mails[count - 1];
      await smtp.waitFor(smtp.received.length + 1);
    }
  };

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    smtp = await startSmtpServer();
    t = await createTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Flagstore <flags@studio.example>' });
  });
  afterAll(() => closeEach(chromium, t, smtp));
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  it('forgot password: the mail arrives, its link sets a new password, and the person signs in with it', async () => {
    const org = await createOrganization(t, 'Forgetful Games');
    const user = await createUser(t, { email: 'fern@studio.test', name: 'Fern' });
    await addMember(t, org.id, user.id, 'editor');
    const page = await open();
    const p = page.page;
    await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    await p.getByRole('link', { name: 'Forgot password?' }).click();
    await p.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await page.accessibilityViolations()).toEqual([]);
    await p.getByLabel('Email').fill('Fern@Studio.test');
    await p.getByRole('button', { name: 'Mail me a link' }).click();
    await p.getByRole('status').getByText('a mail with a link to choose a new password is on its way').waitFor();

    const link = linkIn(await mailTo('fern@studio.test'), 'password-reset');
    await p.goto(link);
    await p.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(await page.accessibilityViolations()).toEqual([]);
    await p.getByLabel('New password').fill('short');
    await p.getByRole('button', { name: 'Set the password' }).click();
    await p.getByText(/newPassword/).waitFor();
    await p.getByLabel('New password').fill('fern has a new passphrase');
    await p.getByRole('button', { name: 'Set the password' }).click();
    await p.getByRole('status').getByText('Your password is set').waitFor();
    await p.getByRole('link', { name: 'Sign in' }).click();
    await page.signIn('fern@studio.test', 'fern has a new passphrase');
    await p.getByRole('heading', { name: 'Flags' }).waitFor();
    expect(page.problems()).toEqual([]);
  });

  it('invitations are mailed, not shown; the list says where each mail stands and resends it', async () => {
    const org = await createOrganization(t, 'Mailing Games');
    const user = await createUser(t, { email: 'ines@studio.test', name: 'Ines' });
    await addMember(t, org.id, user.id, 'admin');
    const page = await open('/console/organization');
    const p = page.page;
    await page.signIn('ines@studio.test', PASSWORD);
    await p.getByRole('heading', { name: 'Invitations' }).waitFor();
    await p.getByLabel('Email to invite').fill('newcomer@studio.test');
    await p.getByRole('button', { name: 'Invite' }).click();
    await p.getByRole('status').getByText('The invitation is mailed to newcomer@studio.test').waitFor();
    expect(await p.locator('code.link').count()).toBe(0);
    await mailTo('newcomer@studio.test');
    const item = p.getByRole('listitem').filter({ hasText: 'newcomer@studio.test' });
    await item.getByText(/^mail /).waitFor();
    await item.getByRole('button', { name: 'Resend the invitation of newcomer@studio.test' }).click();
    const link = linkIn(await mailTo('newcomer@studio.test', 2), 'invitations');
    await item.getByText(/^mail /).waitFor();

    const joining = await open(link.replace(/^https?:\/\/[^/]+/, ''));
    await joining.page.getByLabel('Your name').fill('Newcomer');
    await joining.page.getByLabel('Choose a password').fill('the newcomer passphrase');
    await joining.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await joining.page.getByRole('heading', { name: 'Flags' }).waitFor();
    expect(page.problems()).toEqual([]);
    expect(joining.problems()).toEqual([]);
  });

  it('verifies an email through the mailed link', async () => {
    const user = await createUser(t, { email: 'vic@studio.test', name: 'Vic' });
    await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.id]);
    const vic = await signIn(t, user.email);
    await asSession(t, vic).post('/auth/verify-email').expect(202);
    const link = linkIn(await mailTo('vic@studio.test'), 'verify-email');
    const page = await open(link.replace(/^https?:\/\/[^/]+/, ''));
    expect(await page.accessibilityViolations()).toEqual([]);
    // Opened without the account's session, the link verifies nothing: it asks to sign in as the account, then comes back.
    await page.page.getByRole('link', { name: 'Sign in' }).waitFor();
    expect(await page.page.getByRole('button', { name: 'Verify my email' }).count()).toBe(0);
    await page.page.getByRole('link', { name: 'Sign in' }).click();
    await page.signIn('vic@studio.test', PASSWORD);
    await page.page.getByText('Signed in as vic@studio.test').waitFor();
    await page.page.getByRole('button', { name: 'Verify my email' }).click();
    await page.page.getByRole('status').getByText('Your email is verified').waitFor();
    expect((await request(t.http).get('/v1/auth/session').set('Cookie', vic.cookie).expect(200)).body.user.emailVerified).toBe(true);
    expect(page.problems()).toEqual([]);
  });
});
