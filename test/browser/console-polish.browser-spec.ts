import request from 'supertest';
import type { Page } from 'playwright-core';
import { bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, PASSWORD, Role, signIn } from '../factories/people.factory';
import { pathOf } from '../factories/storage.factory';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';
import { ConsolePage, Theme } from './support/console-page';
import { solidPng } from './support/png';

/**
 * The first hour's console points of issue 33 (decisions.md, "A studio's own deployment"): the invitation page says
 * what the invitation is for; the invitation link and a new key can be copied; a revoked key's secret is gone; the
 * gallery names each file; an upload cannot be started twice. Screenshots in light and dark, axe on each page.
 */
describe('the console, first-hour polish, in Chromium', () => {
  let chromium: ConsoleBrowser;
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    t = await createTestApp();
  });
  afterAll(() => closeEach(chromium, t));
  beforeEach(async () => {
    org = await createOrganization(t, 'Acme Games');
  });
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  async function member(role: Role, name = `Maya ${role}`) {
    const user = await createUser(t, { name });
    await addMember(t, org.id, user.id, role);
    return user;
  }

  async function open(options: { theme?: Theme; path?: string } = {}) {
    return chromium.open(t.config.urls.publicUrl, options);
  }

  async function signedIn(role: Role, options: { theme?: Theme; path?: string } = {}) {
    const user = await member(role);
    const page = await open(options);
    await page.signIn(user.email, PASSWORD);
    return { page, user, p: page.page };
  }

  const clipboard = (p: Page) => p.evaluate(() => (globalThis as any).navigator.clipboard.readText() as Promise<string>);

  async function checked(page: ConsolePage, name: string, theme: Theme) {
    expect({ page: name, theme, violations: await page.accessibilityViolations() }).toEqual({ page: name, theme, violations: [] });
    await page.screenshot(name, theme);
  }

  it('shows an invited person the organization, the role and who invited, before they join', async () => {
    const inviter = await member('admin', 'Maya Okafor');
    const session = await signIn(t, inviter.email);
    const invited = await asSession(t, session, org.id)
      .post('/organization/invitations')
      .send({ email: 'sam@acme.example', role: 'editor' })
      .expect(201);
    const path = new URL(invited.body.url).pathname;
    for (const theme of ['light', 'dark'] as const) {
      const page = await open({ theme, path });
      const p = page.page;
      const facts = p.getByRole('definition');
      await p.getByRole('heading', { name: 'Join the studio on Flagstore' }).waitFor();
      await p.getByText('Maya Okafor invited sam@acme.example to Acme Games as editor.', { exact: false }).waitFor();
      expect(await facts.allTextContents()).toEqual([
        'Acme Games',
        'editor: may read and change its flags and files',
        'Maya Okafor',
        'sam@acme.example',
      ]);
      expect(await p.getByRole('term').allTextContents()).toEqual(['Organization', 'Role', 'Invited by', 'For']);
      // Both ways in, whatever the email: the page cannot know whether it has an account.
      await p.getByRole('link', { name: 'sign in as sam@acme.example' }).waitFor();
      await p.getByLabel('Your name').waitFor();
      await checked(page, 'invitation-pending', theme);
    }
  });

  it('copies the invitation link, copies a new key, and stops showing a key once it is revoked', async () => {
    const { page, p } = await signedIn('admin', { path: '/console/organization' });
    await page.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.config.urls.publicUrl });
    await p.getByRole('link', { name: 'People and keys' }).click();
    const invitations = p.getByRole('region', { name: 'Invitations' });
    await invitations.getByLabel('Email to invite').fill('sam@acme.example');
    await invitations.getByRole('button', { name: 'Invite' }).click();
    const link = (await invitations.locator('code.link').textContent())!;
    expect(link).toMatch(new RegExp(`^${t.config.urls.publicUrl}/console/invitations/[\\w-]+$`));
    await invitations.getByRole('button', { name: 'Copy the link for sam@acme.example' }).click();
    await invitations.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await clipboard(p)).toBe(link);
    // The copied link works: it is the invitation's.
    await request(t.http)
      .get(`/v1/auth/invitations/${link.split('/').pop()}`)
      .expect(200);
    // Where the Clipboard API is missing (plain http on a LAN address), the link is selected and copied the older way.
    await p.evaluate(() => Object.defineProperty((globalThis as any).navigator, 'clipboard', { value: undefined, configurable: true }));
    await invitations.getByRole('button', { name: 'Copy the link for sam@acme.example' }).click();
    await p.waitForFunction((shown) => String((globalThis as any).getSelection()) === shown, link);
    await invitations
      .getByRole('status')
      .filter({ hasText: /^(Copied\.|Selected: press Ctrl\+C)/ })
      .waitFor();
    await page.screenshot('organization-copy-fallback', 'light');
    await p.reload();
    await p.getByRole('region', { name: 'API keys' }).waitFor();

    const keys = p.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('New key name').fill('game-servers-eu');
    await keys.getByRole('button', { name: 'Issue the key' }).click();
    const key = (await keys.locator('code.link').textContent())!;
    expect(key).toMatch(/^fsk_[\w-]{43}$/);
    await keys.getByRole('button', { name: 'Copy the key game-servers-eu' }).click();
    await keys.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await clipboard(p)).toBe(key);
    await page.screenshot('organization-copied', 'light');

    await keys.getByRole('button', { name: 'Revoke game-servers-eu' }).click();
    await p.getByRole('dialog', { name: 'Revoke game-servers-eu?' }).getByRole('button', { name: 'Revoke game-servers-eu' }).click();
    await keys
      .getByRole('row')
      .filter({ hasText: 'game-servers-eu' })
      .getByText(/^revoked/)
      .waitFor();
    // The secret of a revoked key is shown nowhere any more, and neither is its copy button.
    expect(await keys.locator('code.link').count()).toBe(0);
    expect(await p.getByRole('button', { name: 'Copy the key game-servers-eu' }).count()).toBe(0);
    expect(await p.content()).not.toContain(key);
    await checked(page, 'organization-revoked', 'light');
  });

  it('hides the secret of a new key that another admin revoked, once the page reads the keys again', async () => {
    const { p } = await signedIn('admin', { path: '/console/organization' });
    const colleague = await signIn(t, (await member('admin', 'Ola Admin')).email);
    await p.getByRole('link', { name: 'People and keys' }).click();
    const keys = p.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('New key name').fill('build-bot');
    await keys.getByRole('button', { name: 'Issue the key' }).click();
    const key = (await keys.locator('code.link').textContent())!;
    const listed = (await asSession(t, colleague, org.id).get('/organization/api-keys').expect(200)).body as Array<{ id: string; name: string }>;
    await asSession(t, colleague, org.id)
      .delete(`/organization/api-keys/${listed.find((entry) => entry.name === 'build-bot')!.id}`)
      .expect(204);
    // Any change on the page reads the keys again (here: another invitation).
    const invitations = p.getByRole('region', { name: 'Invitations' });
    await invitations.getByLabel('Email to invite').fill('kim@acme.example');
    await invitations.getByRole('button', { name: 'Invite' }).click();
    await keys
      .getByRole('row')
      .filter({ hasText: 'build-bot' })
      .getByText(/^revoked/)
      .waitFor();
    expect(await p.content()).not.toContain(key);
  });

  it('names each file in the gallery: its name, or its kind and date; long names take two lines at most', async () => {
    const stored = async (query: Record<string, string | number>, body: Buffer, contentType: string) => {
      const signed = (await request(t.http).get('/v1/storage/signed-url').query(query).set(bearer(org.key)).expect(200)).body;
      await request(t.http).put(pathOf(signed.url)).set('Content-Type', contentType).send(body).expect(200);
    };
    const png = solidPng([30, 120, 200], 64, 48);
    await stored({ contentType: 'text/plain', size: 5 }, Buffer.from('notes'), 'text/plain');
    await stored({ contentType: 'image/png', size: png.length, fileName: `${'a very long level name '.repeat(8)}.png` }, png, 'image/png');
    for (const theme of ['light', 'dark'] as const) {
      const { page, p } = await signedIn('editor', { theme, path: '/console/storage' });
      const files = p.getByRole('region', { name: 'Files' });
      await files.getByRole('img', { name: /^a very long level name/ }).waitFor();
      await files.getByText(/^Document of /).waitFor();
      await files.getByRole('button', { name: /^Delete file Document of / }).waitFor();
      // The long name is cut on screen, but whole in the title and the image's name.
      const caption = files.locator('.file-name').filter({ hasText: /^a very long level name/ });
      expect(await caption.getAttribute('title')).toBe(`${'a very long level name '.repeat(8)}.png`);
      const box = (await caption.boundingBox())!;
      expect(box.height).toBeLessThan(45); // two lines at most

      if (theme === 'light') {
        const upload = p.getByRole('region', { name: 'Upload a file' });
        await upload.getByLabel('File').setInputFiles({ name: 'Übersicht März.png', mimeType: 'image/png', buffer: png });
        await upload.getByRole('button', { name: 'Upload' }).click();
        await upload.getByRole('status').filter({ hasText: 'Übersicht März.png uploaded.' }).waitFor();
        await files.getByRole('img', { name: 'Übersicht März.png' }).waitFor();
        await files.getByText('Übersicht März.png', { exact: true }).waitFor();
        const items = (await request(t.http).get('/v1/storage/items').set(bearer(org.key)).expect(200)).body.items;
        expect(items[0]).toMatchObject({ fileName: 'Übersicht März.png', metadata: null });
      }
      await checked(page, 'storage-named', theme);
    }
  });

  it('starts one upload for a double click, and keeps the button disabled while it runs', async () => {
    const { page, p } = await signedIn('editor', { path: '/console/storage' });
    const signings: string[] = [];
    p.on('request', (sent) => {
      if (new URL(sent.url()).pathname === '/v1/storage/signed-url') signings.push(sent.url());
    });
    // Hold the bytes until the test has looked at the page mid-upload.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route(
      (url) => url.pathname.startsWith('/upload/'),
      async (route) => {
        await held;
        await route.continue();
      },
    );
    const upload = p.getByRole('region', { name: 'Upload a file' });
    await upload.getByLabel('File').setInputFiles({ name: 'twice.txt', mimeType: 'text/plain', buffer: Buffer.from('only once') });
    await upload.getByRole('button', { name: 'Upload' }).dblclick();
    const button = upload.getByRole('button', { name: 'Uploading…' });
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    expect(await upload.getByLabel('File').isDisabled()).toBe(true);
    // Enter on the form does nothing either.
    await upload
      .getByRole('button', { name: 'Uploading…' })
      .press('Enter')
      .catch(() => undefined);
    await page.screenshot('storage-uploading', 'light');
    release();
    await upload.getByRole('status').filter({ hasText: 'twice.txt uploaded.' }).waitFor();
    expect(signings).toHaveLength(1);
    const items = (await request(t.http).get('/v1/storage/items').set(bearer(org.key)).expect(200)).body;
    expect(items.total).toBe(1);
    expect(items.items[0]).toMatchObject({ fileName: 'twice.txt', state: 'complete' });
    // Done: the choice is cleared, so the same file is not sent again by a second press.
    expect(await upload.getByRole('button', { name: 'Upload', exact: true }).isDisabled()).toBe(true);

    // Two submits in one go (a script, or a keyboard repeating faster than a redraw): one upload still.
    await upload.getByLabel('File').setInputFiles({ name: 'again.txt', mimeType: 'text/plain', buffer: Buffer.from('once more') });
    await p.evaluate(() => {
      const form = (globalThis as any).document.querySelector('#upload-title').parentElement.querySelector('form');
      form.requestSubmit();
      form.requestSubmit();
    });
    await upload.getByRole('status').filter({ hasText: 'again.txt uploaded.' }).waitFor();
    expect(signings).toHaveLength(2);
    expect((await request(t.http).get('/v1/storage/items').set(bearer(org.key)).expect(200)).body.total).toBe(2);
  });
});
