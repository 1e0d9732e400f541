import { randomBytes } from 'node:crypto';
import { freePort } from '../../src/common/free-port';
import { createFlag } from '../factories/flags.factory';
import { admin, createOrganization } from '../factories/organizations.factory';
import { addMember } from '../factories/people.factory';
import { OidcTestProvider, startOidcProvider } from '../support/servers/oidc-provider';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';

/**
 * "Sign in with SSO" in the console, in Chromium, against a real OpenID provider (node-oidc-provider in a child
 * process on loopback): the console offers it when the service has OIDC_* set, the browser goes to the provider and
 * back, and the person lands where they were going, signed in.
 */
describe('the console signs in through single sign-on (Chromium, a real OpenID provider)', () => {
  let chromium: ConsoleBrowser;
  let provider: OidcTestProvider;
  let t: TestApp;

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    const port = await freePort();
    const publicUrl = `http://localhost:${port}`;
    const client = { clientId: 'flagstore', clientSecret: randomBytes(24).toString('base64url'), redirectUri: `${publicUrl}/v1/auth/sso/callback` };
    provider = await startOidcProvider({ client, accounts: [{ sub: 'ada', email: 'ada@studio.test', email_verified: true, name: 'Ada Lovelace' }] });
    t = await createTestApp({
      PORT: String(port),
      PUBLIC_URL: publicUrl,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: client.clientId,
      OIDC_CLIENT_SECRET: client.clientSecret,
    });
  });
  afterAll(() => closeEach(chromium, t, provider ? { close: () => provider.stop() } : undefined));
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  it('signs in a member through the provider and comes back to the page they asked for', async () => {
    const org = await createOrganization(t, 'Acme Games');
    const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true });
    const ada = (await admin(t).post('/users').send({ email: 'ada@studio.test', name: 'Ada Lovelace' }).expect(201)).body as { id: string };
    await addMember(t, org.id, ada.id, 'editor');

    const page = await chromium.open(t.config.urls.publicUrl, { path: `/console/flags/${flag.id}` });
    const p = page.page;
    await p.getByRole('link', { name: 'Sign in with SSO' }).click();
    // At the provider (its own development pages): any password signs in an account by its `sub`, then consent.
    await p.waitForURL((url) => url.origin === provider.issuer);
    await p.locator('input[name=login]').fill('ada');
    await p.locator('input[name=password]').fill('anything');
    await p.locator('button[type=submit]').click();
    await p.locator('button[type=submit]').click();

    await p.getByRole('heading', { name: 'double-xp' }).waitFor();
    expect(new URL(p.url()).pathname).toBe(`/console/flags/${flag.id}`);
    await p.getByText('Ada Lovelace').waitFor();
    expect(page.problems()).toEqual([]);
  });
});

/** A 429 in the console says when to try again: here, the sign-in failures of one address past their budget. */
describe('the console when the service says 429', () => {
  let chromium: ConsoleBrowser;
  let t: TestApp;

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    t = await createTestApp({ SIGN_IN_FAILURES_PER_MINUTE: '2' });
  });
  afterAll(() => closeEach(chromium, t));
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  it('tells the person how long to wait', async () => {
    const page = await chromium.open(t.config.urls.publicUrl);
    const p = page.page;
    await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    await p.getByLabel('Email').fill('nobody@studio.example');
    await p.getByLabel('Password').fill('not the password at all');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p
        .getByRole('alert')
        .filter({ hasText: /email or password/i })
        .waitFor();
    }
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = p.getByRole('alert').filter({ hasText: /^Too many requests: try again in \d+ s\.$/ });
    await alert.waitFor();
  });
});
