import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_DIR } from '../../src/console/console-assets';
import { api, createFlag } from '../factories/flags.factory';
import { admin, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, PASSWORD, Role, signIn as signInThroughApi } from '../factories/people.factory';
import { eventually } from '../support/eventually';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';
import { ConsolePage, Theme } from './support/console-page';
import { solidPng } from './support/png';

/**
 * The console (decisions.md, "Console"), end to end in Debian's Chromium against the real service and database: the
 * built console (dist/public/console, from `npm run build`) served by the app, every element found by its role and
 * accessible name, axe-core on every page, and a screenshot of every page in light and dark.
 */
describe('the console in Chromium', () => {
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
  // No page error and no Content-Security-Policy report on any page a test opened.
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  async function member(role: Role, organizationId = org.id) {
    const user = await createUser(t, { name: `Maya ${role}` });
    await addMember(t, organizationId, user.id, role);
    return user;
  }

  async function signedIn(role: Role = 'editor', options: { theme?: Theme; path?: string } = {}) {
    const user = await member(role);
    const page = await chromium.open(t.config.urls.publicUrl, options);
    await page.signIn(user.email, PASSWORD);
    return { page, user, p: page.page };
  }

  /** Every write of a flag the page sends from now on (PATCH, DELETE, restore), with its If-Match header. */
  const flagWritesOf = (p: ConsolePage['page']) => {
    const writes: { request: string; ifMatch: string | undefined }[] = [];
    p.on('request', (sent) => {
      const path = new URL(sent.url()).pathname;
      if (/^\/v1\/flags\/[\w-]+(\/restore)?$/.test(path) && sent.method() !== 'GET') {
        writes.push({ request: `${sent.method()} ${path.replace(/[\w-]{36}/, '{flagId}')}`, ifMatch: sent.headers()['if-match'] });
      }
    });
    return writes;
  };

  const flagNamed = async (key: string) => {
    const flags = (await api(t, org.key).get('/flags?includeArchived=true&limit=100').expect(200)).body.results as { key: string }[];
    return flags.find((flag) => flag.key === key) as any;
  };

  it('signs in, keeps the session out of reach of scripts, comes back to a deep link, and signs out', async () => {
    const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: false });
    const user = await member('editor');
    const page = await chromium.open(t.config.urls.publicUrl, { path: `/console/flags/${flag.id}` });
    const p = page.page;
    // Not signed in: the sign-in page, which remembers where the person was going.
    await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    expect(new URL(p.url()).searchParams.get('returnTo')).toBe(`/console/flags/${flag.id}`);

    await p.getByLabel('Email').fill(user.email);
    await p.getByLabel('Password').fill('not the password at all');
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p
      .getByRole('alert')
      .filter({ hasText: /email or password/i })
      .waitFor();

    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('heading', { name: 'double-xp' }).waitFor();
    expect(new URL(p.url()).pathname).toBe(`/console/flags/${flag.id}`);

    // The cookie is HttpOnly and the CSRF token lives in memory only.
    expect(await p.evaluate(() => (globalThis as any).document.cookie)).not.toContain('flagstore_session');
    const stored = await p.evaluate(() => JSON.stringify({ ...(globalThis as any).localStorage, ...(globalThis as any).sessionStorage }));
    expect(stored).not.toMatch(/csrf|session/i);

    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    const session = await p.evaluate(() => fetch('/v1/auth/session').then((response) => response.status));
    expect(session).toBe(401);
  });

  it('keeps the first load under 250 KB of JavaScript, gzipped, and reports the time from navigation to the flag list', async () => {
    const size = JSON.parse(readFileSync(join(CONSOLE_DIR, '.initial-size.json'), 'utf8')) as { scripts: string[]; gzipBytes: number };
    expect(size.gzipBytes).toBeLessThan(250 * 1024);
    await subscribe(t, org.id);
    for (let index = 0; index < 30; index += 1) await createFlag(t, org.key, { key: `flag-${index}`, type: 'boolean', value: index % 2 === 0 });
    const { p } = await signedIn('editor');
    await p.getByRole('switch', { name: 'flag-29' }).waitFor();
    // A fresh navigation, signed in: from the request for the page to the list drawn with its switches.
    await p.goto(`${t.config.urls.publicUrl}/console/flags`);
    await p.getByRole('switch', { name: 'flag-29' }).waitFor();
    const elapsed = await p.evaluate(() => (globalThis as any).performance.now() as number);
    // Information, not a promise: a timing asserted in a test would fail on a busy machine.
    console.info(
      `console: first load ${(size.gzipBytes / 1024).toFixed(1)} KB gzipped (${size.scripts.join(', ')}); navigation to the flag list ${elapsed.toFixed(0)} ms on loopback`,
    );
  });

  it('returns to sign-in when the session ends, and back to the same page afterwards', async () => {
    const { page, user, p } = await signedIn('editor');
    await p.getByRole('heading', { name: 'Flags' }).waitFor();
    await p.getByRole('link', { name: 'New flag' }).click();
    await p.getByRole('heading', { name: 'New flag' }).waitFor();
    // The person changes their password from another device: every other session of theirs ends, this one included.
    const elsewhere = await signInThroughApi(t, user.email);
    const newPassword = 'a brand new passphrase';
    await asSession(t, elsewhere).post('/auth/password').send({ currentPassword: PASSWORD, newPassword }).expect(204);
    await p.getByLabel('Key').fill('late-flag');
    await p.getByLabel('Name').fill('Late flag');
    await p.getByRole('button', { name: 'Create flag' }).click();
    await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    expect(new URL(p.url()).searchParams.get('returnTo')).toBe('/console/flags/new');
    await page.signIn(user.email, newPassword);
    await p.getByRole('heading', { name: 'New flag' }).waitFor();
  });

  it('creates a flag of each type with the editor that fits it, checking JSON as it is typed', async () => {
    const { p } = await signedIn('editor');
    const create = async (fields: { key: string; type: string; fill?: () => Promise<void> }) => {
      await p.getByRole('link', { name: 'New flag' }).click();
      await p.getByLabel('Key').fill(fields.key);
      await p.getByLabel('Name').fill(`The ${fields.key}`);
      await p.getByLabel('Type').selectOption(fields.type);
      await fields.fill?.();
      await p.getByRole('button', { name: 'Create flag' }).click();
      await p.getByRole('heading', { name: fields.key }).waitFor();
      await p.getByRole('link', { name: 'Flags' }).first().click();
    };
    await create({ key: 'pvp-enabled', type: 'boolean', fill: () => p.getByRole('switch', { name: 'Value' }).click() });
    await create({ key: 'motd', type: 'string', fill: () => p.getByLabel('Value').fill('Double XP this weekend') });
    await create({ key: 'xp-rate', type: 'number', fill: () => p.getByLabel('Value').fill('2.5') });
    await create({
      key: 'loot-table',
      type: 'json',
      fill: async () => {
        const editor = p.getByLabel('Value');
        await editor.fill('{"a":{"b":{"c":{"d":{"e":1}}}}}');
        await p.getByRole('alert').filter({ hasText: 'The value nests 5 levels deep; at most 4 are allowed.' }).waitFor();
        expect(await p.getByRole('button', { name: 'Create flag' }).isDisabled()).toBe(true);
        await editor.fill(JSON.stringify('x'.repeat(4095)));
        await p.getByRole('alert').filter({ hasText: 'The value is 4097 bytes; at most 4096 are allowed.' }).waitFor();
        await editor.fill('{"rare": [1, 2]}');
        expect(await p.getByRole('alert').count()).toBe(0);
      },
    });

    expect(await flagNamed('pvp-enabled')).toMatchObject({ type: 'boolean', value: true });
    expect(await flagNamed('motd')).toMatchObject({ type: 'string', value: 'Double XP this weekend' });
    expect(await flagNamed('xp-rate')).toMatchObject({ type: 'number', value: 2.5 });
    expect(await flagNamed('loot-table')).toMatchObject({ type: 'json', value: { rare: [1, 2] } });
    await p.getByRole('table').getByRole('link', { name: 'loot-table' }).waitFor();
  });

  it('shows the 409 for a taken key under the key field', async () => {
    await createFlag(t, org.key, { key: 'double-xp' });
    const { p } = await signedIn('editor', { path: '/console/flags/new' });
    await p.getByRole('heading', { name: 'New flag' }).waitFor();
    await p.getByLabel('Key').fill('double-xp');
    await p.getByLabel('Name').fill('Again');
    await p.getByRole('button', { name: 'Create flag' }).click();
    const key = p.getByLabel('Key');
    await p.getByText(/already exists in this organization/).waitFor();
    expect(await key.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await key.getAttribute('aria-describedby'))!.split(' ');
    const error = await p.locator(`[id="${describedBy[describedBy.length - 1]}"]`).textContent();
    expect(error).toMatch(/A flag with key "double-xp" already exists/);
  });

  it('toggles a boolean flag in the list by its switch, named by the key', async () => {
    await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: false });
    const { p } = await signedIn('editor');
    const toggle = p.getByRole('switch', { name: 'double-xp' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    // Functions, not strings: the console's CSP forbids evaluating a string in the page.
    const checked = (state: string) =>
      p.waitForFunction(
        (expected) => (globalThis as any).document.querySelector('[role=switch][aria-label="double-xp"]')?.getAttribute('aria-checked') === expected,
        state,
      );
    await checked('true');
    expect(await flagNamed('double-xp')).toMatchObject({ value: true });
    // From the keyboard too.
    await toggle.focus();
    await p.keyboard.press('Space');
    await checked('false');
    expect(await flagNamed('double-xp')).toMatchObject({ value: false });
  });

  it('edits a flag, archives and unarchives it, and deletes it after a confirmation naming the key', async () => {
    const flag = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
    const { p } = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    const writes = flagWritesOf(p);
    await p.getByRole('heading', { name: 'motd' }).waitFor();
    await p.getByLabel('Name').fill('Message of the day');
    await p.getByLabel('Description').fill('Shown in the lobby');
    await p.getByLabel('Value', { exact: true }).fill('Welcome back');
    await p.getByLabel('Runtime').selectOption('server');
    await p.getByRole('button', { name: 'Save changes' }).click();
    await p.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await flagNamed('motd')).toMatchObject({
      name: 'Message of the day',
      description: 'Shown in the lobby',
      value: 'Welcome back',
      runtime: 'server',
    });

    await p.getByRole('button', { name: 'Archive' }).click();
    await p.getByRole('button', { name: 'Unarchive' }).waitFor();
    expect(await flagNamed('motd')).toMatchObject({ archived: true });
    await p.getByRole('link', { name: 'Flags' }).first().click();
    await p.getByText('No flags yet.').waitFor();
    await p.getByLabel('Show archived flags').check();
    await p.getByRole('table').getByRole('link', { name: 'motd' }).click();
    await p.getByRole('button', { name: 'Unarchive' }).click();
    await p.getByRole('button', { name: 'Archive' }).waitFor();

    await p.getByRole('button', { name: 'Delete' }).click();
    const dialog = p.getByRole('dialog', { name: 'Delete flag motd?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await flagNamed('motd')).toBeDefined();
    await p.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete motd' }).click();
    await p.getByRole('heading', { name: 'Flags' }).waitFor();
    expect(await flagNamed('motd')).toBeUndefined();
    // Every save said which version of the flag it was made on (the save, archive, unarchive, delete).
    expect(writes).toEqual([
      { request: 'PATCH /v1/flags/{flagId}', ifMatch: '"1"' },
      { request: 'PATCH /v1/flags/{flagId}', ifMatch: '"2"' },
      { request: 'PATCH /v1/flags/{flagId}', ifMatch: '"3"' },
      { request: 'DELETE /v1/flags/{flagId}', ifMatch: '"4"' },
    ]);
  });

  it('searches, filters archived flags and pages through the list, with the quota', async () => {
    await subscribe(t, org.id);
    for (let index = 0; index < 23; index += 1) await createFlag(t, org.key, { key: `event-${String(index).padStart(2, '0')}` });
    const retired = await createFlag(t, org.key, { key: 'retired-event' });
    await api(t, org.key).patch(`/flags/${retired.id}`).send({ archived: true }).expect(200);
    const { p } = await signedIn('viewer');
    await p.getByLabel('Quota').filter({ hasText: '24 of 50' }).waitFor();
    await p.getByText('Page 1 of 2').waitFor();
    expect(await p.getByRole('table').getByRole('row').count()).toBe(21); // 20 and the header
    await p.getByRole('button', { name: 'Next page' }).click();
    await p.getByText('Page 2 of 2').waitFor();
    expect(await p.getByRole('table').getByRole('row').count()).toBe(4);

    // A slow read of page 1 (someone's change set it off) that answers after page 2 was asked for is dropped: the
    // rows always match the page number beside them.
    await p.getByRole('button', { name: 'Previous page' }).click();
    await p.getByText('Page 1 of 2').waitFor();
    const firstPage = /\/v1\/flags\?page=1&/;
    let entered!: () => void;
    const slowReadStarted = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route(firstPage, async (route) => {
      const response = await route.fetch();
      entered();
      await held;
      await route.fulfill({ response });
    });
    await api(t, org.key).patch(`/flags/${retired.id}`).send({ name: 'Retired event' }).expect(200);
    await slowReadStarted;
    await p.getByRole('button', { name: 'Next page' }).click();
    await p.getByText('Page 2 of 2').waitFor();
    const slowAnswer = p.waitForResponse(firstPage);
    release();
    await slowAnswer;
    await p.evaluate(() => new Promise((resolve) => (globalThis as any).requestAnimationFrame(resolve)));
    expect(await p.getByText('Page 2 of 2').count()).toBe(1);
    expect(await p.getByRole('table').getByRole('row').count()).toBe(4);
    await p.unroute(firstPage);

    await p.getByLabel('Search').fill('event-1');
    await p.waitForFunction(() => new URL((globalThis as any).location.href).searchParams.get('search') === 'event-1');
    await p.getByRole('link', { name: 'event-19' }).waitFor();
    expect(await p.getByRole('table').getByRole('row').count()).toBe(11);
    await p.getByLabel('Search').fill('retired');
    await p.getByText('No flag matches “retired”.').waitFor();
    await p.getByLabel('Show archived flags').check();
    await p.getByRole('link', { name: 'retired-event' }).waitFor();
    // The filters live in the address: a reload keeps them.
    await p.reload();
    await p.getByRole('link', { name: 'retired-event' }).waitFor();
    expect(await p.getByLabel('Show archived flags').isChecked()).toBe(true);
  });

  it('marks a locked flag with the reason and disables its edit controls', async () => {
    const subscription = await subscribe(t, org.id);
    const flags = [];
    for (let index = 0; index < 6; index += 1) flags.push(await createFlag(t, org.key, { key: `f${index}`, type: 'boolean', value: true }));
    await admin(t).delete(`/organizations/${org.id}/subscriptions/${subscription}`).expect(204);
    const { p } = await signedIn('admin', { path: `/console/flags/${flags[5].id}` });
    await p.getByRole('heading', { name: 'f5' }).waitFor();
    await p
      .getByRole('note')
      .filter({ hasText: /Locked\. Beyond the plan's limit/ })
      .waitFor();
    expect(await p.getByLabel('Name').isDisabled()).toBe(true);
    expect(await p.getByRole('switch', { name: 'Value' }).isDisabled()).toBe(true);
    expect(await p.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    await p.getByRole('link', { name: 'Flags' }).first().click();
    expect(await p.getByRole('switch', { name: 'f5' }).isDisabled()).toBe(true);
    expect(await p.getByRole('switch', { name: 'f0' }).isDisabled()).toBe(false);
    await p.getByLabel('Quota').filter({ hasText: '1 locked' }).waitFor();
  });

  it("shows a change made by someone else without a reload, and keeps a person's unsaved edits", async () => {
    const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: false });
    const { p } = await signedIn('viewer');
    const toggle = p.getByRole('switch', { name: 'double-xp' });
    await toggle.waitFor();
    // A game studio's tooling, with an API key, through another request path entirely.
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: true }).expect(200);
    await p.waitForFunction(
      () => (globalThis as any).document.querySelector('[role=switch][aria-label="double-xp"]')?.getAttribute('aria-checked') === 'true',
      undefined,
      { timeout: 3_000 },
    );
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hi' });
    await p.getByRole('link', { name: 'motd' }).waitFor({ timeout: 3_000 });

    // On a flag's page: shown at once while the form is untouched...
    const editor = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    const q = editor.p;
    await q.getByRole('heading', { name: 'double-xp' }).waitFor();
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Double XP (weekend)' }).expect(200);
    await q.waitForFunction(() => ((globalThis as any).document.querySelector('#main input') as any)?.value === 'Double XP (weekend)', undefined, {
      timeout: 3_000,
    });
    // ...and never over what the person is typing.
    await q.getByLabel('Name').fill('My own name');
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Someone else' }).expect(200);
    await q.getByText('This flag was changed elsewhere while you were editing it.').waitFor({ timeout: 3_000 });
    expect(await q.getByLabel('Name').inputValue()).toBe('My own name');
  });

  it("knows its own save from a colleague's change: no banner after saving; a colleague's change shows it and the stale save is refused", async () => {
    const flag = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
    const { p } = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    await p.getByRole('heading', { name: 'motd' }).waitFor();
    const banner = p.getByText('This flag was changed elsewhere while you were editing it.');
    const history = p.getByRole('region', { name: 'History' });
    const flagRead = (response: { url(): string; request(): { method(): string } }) =>
      response.request().method() === 'GET' && new URL(response.url()).pathname === `/v1/flags/${flag.id}`;

    // One's own saves (the value, then the description): the page reads the flag again when the event stream tells of
    // each, and knows it for its own by the version its save answered. The event is published at the commit, before
    // the save's answer is written, so it often overtakes that answer (always, across a slow network): here the answer
    // is held until the event has reached the page (its history reads the log again on it).
    const holdSavesUntilTheEvent = async () => {
      let arrived!: () => void;
      const eventArrived = new Promise<void>((resolve) => (arrived = resolve));
      const onRequest = (sent: { method(): string; url(): string }) => {
        if (sent.method() === 'GET' && new URL(sent.url()).pathname === '/v1/flags/audit') arrived();
      };
      p.on('request', onRequest);
      const flagUrl = `**/v1/flags/${flag.id}`;
      await p.route(flagUrl, async (route) => {
        if (route.request().method() !== 'PATCH') return route.fallback();
        const response = await route.fetch();
        await eventArrived;
        await route.fulfill({ response });
      });
      return async () => {
        p.off('request', onRequest);
        await p.unroute(flagUrl);
      };
    };
    for (const [edit, entry] of [
      [() => p.getByLabel('Value', { exact: true }).fill('Welcome back'), 'changed the value'],
      [() => p.getByLabel('Description').fill('Shown in the lobby'), 'renamed or described'],
    ] as const) {
      await edit();
      const release = await holdSavesUntilTheEvent();
      const eventRead = p.waitForResponse(flagRead);
      const saving = p.waitForRequest((sent) => sent.method() === 'PATCH');
      await p.getByRole('button', { name: 'Save changes' }).click();
      expect((await saving).headers()['if-match']).toMatch(/^"\d+"$/);
      await p.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await history.getByText(entry).first().waitFor({ timeout: 3_000 });
      await eventRead;
      await release();
      await p.evaluate(() => new Promise((resolve) => (globalThis as any).setTimeout(resolve, 200)));
      expect(await banner.count()).toBe(0);
    }
    expect(await flagNamed('motd')).toMatchObject({ value: 'Welcome back', description: 'Shown in the lobby' });

    // A colleague changes the flag while this person edits it: the banner, and their edits kept...
    await p.getByLabel('Name').fill('Message of the day');
    const colleague = await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'string', value: 'Maintenance at 3 pm' }).expect(200);
    await banner.waitFor({ timeout: 3_000 });
    expect(await p.getByLabel('Name').inputValue()).toBe('Message of the day');
    // ...and saving them over the colleague's change is refused: nothing written, and a way to the latest.
    await p.getByRole('button', { name: 'Save changes' }).click();
    await p.getByRole('alert').filter({ hasText: 'Not saved: someone else changed this flag after you opened it' }).first().waitFor();
    expect(await flagNamed('motd')).toMatchObject({ name: 'Flag motd', value: 'Maintenance at 3 pm' });
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).headers.etag).toBe(colleague.headers.etag);
    await p.getByRole('button', { name: 'Show the latest (discard my edits)' }).click();
    await eventually(async () => (await p.getByLabel('Value', { exact: true }).inputValue()) === 'Maintenance at 3 pm', {
      timeoutMs: 3_000,
      what: "the colleague's value in the form",
    });
    expect(await p.getByLabel('Name').inputValue()).toBe('Flag motd');
    expect(await banner.count()).toBe(0);
    // From the latest, the person's change goes through.
    await p.getByLabel('Name').fill('Message of the day');
    await p.getByRole('button', { name: 'Save changes' }).click();
    await p.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await flagNamed('motd')).toMatchObject({ name: 'Message of the day', value: 'Maintenance at 3 pm' });
  });

  it("shows a flag's history naming who changed what, with a diff, and restores an earlier version after a confirmation", async () => {
    const flag = await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { tiers: [1, 2], rare: 0.1 } });
    const rules = [
      { id: 'europe', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west', 'eu-central'] }], value: { tiers: [9], rare: 1 } },
      { id: 'canary', conditions: [{ attribute: 'serverId', operator: 'percentage', values: [0, 10] }], value: { tiers: [], rare: 0 } },
    ];
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ rules }).expect(200);
    await api(t, org.key)
      .patch(`/flags/${flag.id}`)
      .send({ type: 'json', value: { tiers: [1, 5], rare: 0.1 } })
      .expect(200);
    const { page, p, user } = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    const history = p.getByRole('region', { name: 'History' });
    await history.getByRole('listitem').first().waitFor();
    // The key's change: the key named, the one item of the value that changed.
    const latest = history.getByRole('listitem').first();
    await latest.getByText(/key “key-flags_read-flags_write-storage_read-storage_write-flags_write_unreviewed” changed the value/).waitFor();
    await latest.getByRole('rowheader', { name: 'value.tiers[1]' }).waitFor();
    expect(await latest.getByRole('row').filter({ hasText: 'value.tiers[1]' }).textContent()).toBe('value.tiers[1]25');

    // The rules' change reads as the rules editor reads rules, whole, not as JSON cut short.
    const timeline = history.locator('.timeline > li');
    const rulesEntry = timeline.nth(1);
    expect(await rulesEntry.getByRole('row').filter({ hasText: 'rules' }).textContent()).toBe(
      'rulesnoneeurope: region is one of eu-west, eu-central → {"rare":1,"tiers":[9]}canary: serverId falls in the rollout 0–10 % → {"rare":0,"tiers":[]}',
    );

    // Back to the state after creation, as this person: first what it will change, the two rules it removes included.
    const created = timeline.last();
    const createdAt = (await created.locator('time').textContent())!;
    await created.getByRole('button', { name: /^Restore this version \(after the change of / }).click();
    const dialog = p.getByRole('dialog', { name: `Restore the version of ${createdAt}?` });
    await dialog.waitFor();
    await dialog.getByText('Value: {"rare":0.1,"tiers":[1,5]} → {"rare":0.1,"tiers":[1,2]}').waitFor();
    await dialog.getByText('These 2 targeting rules are removed:').waitFor();
    expect(
      await dialog
        .getByRole('listitem')
        .filter({ hasText: /^europe: / })
        .textContent(),
    ).toBe('europe: region is one of eu-west, eu-central → {"rare":1,"tiers":[9]}');
    expect(
      await dialog
        .getByRole('listitem')
        .filter({ hasText: /^canary: / })
        .textContent(),
    ).toBe('canary: serverId falls in the rollout 0–10 % → {"rare":0,"tiers":[]}');
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('flag-restore', 'light');
    // Cancelled, nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await flagNamed('loot-table')).toMatchObject({ value: { tiers: [1, 5], rare: 0.1 }, rules: expect.any(Array) });

    const writes = flagWritesOf(p);
    await created.getByRole('button', { name: /^Restore this version \(after the change of / }).click();
    await dialog.getByRole('button', { name: 'Restore this version' }).click();
    await history
      .getByRole('status')
      .filter({ hasText: `Restored the version of ${createdAt}: the flag serves {"rare":0.1,"tiers":[1,2]} with no targeting rules.` })
      .waitFor();
    // The history says it was a restore, and of which version.
    await history.getByText(`${user.name} restored the version of ${createdAt} (changed the value)`).waitFor();
    expect(writes).toEqual([{ request: 'POST /v1/flags/{flagId}/restore', ifMatch: '"3"' }]);
    const stored = await flagNamed('loot-table');
    expect(stored).toMatchObject({ value: { tiers: [1, 2], rare: 0.1 } });
    expect(stored).not.toHaveProperty('rules');
    await p.waitForFunction(() => ((globalThis as any).document.querySelector('textarea.code') as any)?.value.includes('"rare"'));
    expect(JSON.parse(await p.getByLabel('Value', { exact: true }).inputValue())).toEqual({ tiers: [1, 2], rare: 0.1 });

    // In dark too: the confirmation of going back to the rules, which lists the rules it adds.
    const dark = await chromium.open(t.config.urls.publicUrl, { theme: 'dark', path: `/console/flags/${flag.id}` });
    await dark.signIn(user.email, PASSWORD);
    const darkHistory = dark.page.getByRole('region', { name: 'History' });
    await darkHistory.getByText(/restored the version of/).waitFor();
    await darkHistory
      .locator('.timeline > li')
      .nth(2)
      .getByRole('button', { name: /^Restore this version/ })
      .click();
    await dark.page.getByRole('dialog').getByText('These 2 targeting rules are added:').waitFor();
    expect({ violations: await dark.accessibilityViolations() }).toEqual({ violations: [] });
    await dark.screenshot('flag-restore', 'dark');
  });

  it('schedules a change for a date and time, lists it, and cancels it', async () => {
    const flag = await createFlag(t, org.key, { key: 'xp-rate', type: 'number', value: 1 });
    const { p } = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    const section = p.getByRole('region', { name: 'Scheduled changes' });
    await section.getByText('Nothing scheduled.').waitFor();
    const friday = new Date(Date.now() + 3 * 86_400_000);
    friday.setSeconds(0, 0);
    const local = new Date(friday.getTime() - friday.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await section.getByLabel('Apply at').fill(local);
    await section.getByLabel('New value').fill('2');
    await section.getByRole('button', { name: 'Schedule the change' }).click();
    await section.getByText(/value → 2/).waitFor();
    const [schedule] = (await api(t, org.key).get(`/flags/${flag.id}/schedules`).expect(200)).body.results;
    expect(schedule).toMatchObject({ state: 'pending', at: friday.toISOString(), change: { type: 'number', value: 2 } });
    await section.getByRole('button', { name: /^Cancel the change of/ }).click();
    await section.getByText('Nothing scheduled.').waitFor();
    expect((await api(t, org.key).get(`/flags/${flag.id}/schedules`).expect(200)).body.results).toEqual([]);
  });

  it("edits a flag's rules (a region condition, a 10 % rollout) and previews the value a context gets", async () => {
    const flag = await createFlag(t, org.key, { key: 'new-matchmaker', type: 'boolean', value: false });
    const { p } = await signedIn('editor', { path: `/console/flags/${flag.id}` });
    const writes = flagWritesOf(p);
    const rules = p.getByRole('region', { name: 'Targeting rules' });
    await rules.getByText("No rules: everyone gets the flag's value.").waitFor();

    // Rule 1: European servers.
    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByLabel('Rule 1 id').fill('europe');
    const first = rules.getByRole('group', { name: 'Rule 1, condition 1' });
    await first.getByLabel('Attribute').fill('region');
    await first.getByLabel('Values (comma-separated)').fill('eu-west, eu-central');
    expect(await rules.getByRole('switch', { name: 'Rule 1 value' }).getAttribute('aria-checked')).toBe('true');
    // Rule 2: a 10 % canary of the other servers, by serverId.
    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByLabel('Rule 2 id').fill('canary');
    const second = rules.getByRole('group', { name: 'Rule 2, condition 1' });
    await second.getByLabel('Attribute').fill('serverId');
    await second.getByLabel('Operator').selectOption('percentage');
    await second.getByLabel('From %').fill('0');
    await second.getByLabel('To %').fill('10');
    await rules.getByRole('button', { name: 'Save rules' }).click();
    await rules.getByRole('status').filter({ hasText: 'Rules saved.' }).waitFor();
    expect(writes).toEqual([{ request: 'PATCH /v1/flags/{flagId}', ifMatch: '"1"' }]);
    expect((await flagNamed('new-matchmaker')).rules).toEqual([
      { id: 'europe', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west', 'eu-central'] }], value: true },
      { id: 'canary', conditions: [{ attribute: 'serverId', operator: 'percentage', values: [0, 10] }], value: true },
    ]);

    // The preview: what a server gets, through the service's evaluator.
    const preview = async (context: object) => {
      await rules.getByLabel('Context (JSON)').fill(JSON.stringify(context));
      await rules.getByRole('button', { name: 'Evaluate' }).click();
      return (await rules.locator('.evaluation').textContent())!;
    };
    await expect(preview({ serverId: 'us-east-1', region: 'eu-west' })).resolves.toMatch(/Gets true \(rule europe, TARGETING_MATCH\)/);
    // eu-west-27's bucket for new-matchmaker is 3.89 (in the first 10 %), eu-west-21's 17.88.
    await expect(preview({ serverId: 'eu-west-27', region: 'us-east' })).resolves.toMatch(/Gets true \(rule canary, SPLIT\)/);
    await expect(preview({ serverId: 'eu-west-21', region: 'us-east' })).resolves.toMatch(/Gets false \(no rule matched, DEFAULT\)/);

    // A rule the service refuses: its message beside that rule's condition.
    await second.getByLabel('To %').fill('101');
    await rules.getByRole('button', { name: 'Save rules' }).click();
    await second.getByRole('alert').filter({ hasText: 'values must be [from, to] with 0 <= from < to <= 100' }).waitFor();

    // Someone else widens the canary meanwhile: the person's unsaved 101 stays, and the editor says so...
    const canaryTo = async (to: number) =>
      api(t, org.key)
        .patch(`/flags/${flag.id}`)
        .send({
          rules: [
            { id: 'europe', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west', 'eu-central'] }], value: true },
            { id: 'canary', conditions: [{ attribute: 'serverId', operator: 'percentage', values: [0, to] }], value: true },
          ],
        })
        .expect(200);
    await canaryTo(50);
    await rules
      .getByText('These rules were changed elsewhere while you were editing them; saving yours replaces that change.')
      .waitFor({ timeout: 3_000 });
    expect(await second.getByLabel('To %').inputValue()).toBe('101');
    // ...until they choose the latest; from then on, untouched, the editor follows every change without a reload.
    await rules.getByRole('button', { name: 'Show the latest rules (discard my edits)' }).click();
    expect(await second.getByLabel('To %').inputValue()).toBe('50');
    await canaryTo(100);
    await eventually(async () => (await second.getByLabel('To %').inputValue()) === '100', {
      timeoutMs: 3_000,
      what: 'the latest rules in the editor',
    });
  });

  it('lets an admin invite someone who joins through the link, change roles, remove a member, and issue and revoke keys', async () => {
    const { p } = await signedIn('admin');
    await p.getByRole('link', { name: 'People and keys' }).click();
    const invitations = p.getByRole('region', { name: 'Invitations' });
    await invitations.getByLabel('Email to invite').fill('sam@acme.example');
    await invitations.getByLabel('Their role').selectOption('viewer');
    await invitations.getByRole('button', { name: 'Invite' }).click();
    const link = (await invitations.locator('code.link').textContent())!;
    expect(link).toMatch(new RegExp(`^${t.config.urls.publicUrl}/console/invitations/[\\w-]+$`));
    await invitations.getByText(/sam@acme\.example as viewer/).waitFor();

    // Sam opens the link in a browser of their own, chooses a name and password, and is in.
    const sam = await chromium.open(t.config.urls.publicUrl, { path: new URL(link).pathname });
    await sam.page.getByRole('heading', { name: 'Join the studio on Flagstore' }).waitFor();
    // What the link is for (GET /v1/auth/invitations/{token}), and both ways in: the service never says which applies.
    await sam.page.getByText(/invited sam@acme\.example to .+ as viewer\./).waitFor();
    await sam.page.getByRole('link', { name: 'sign in as sam@acme.example' }).waitFor();
    await sam.page.getByLabel('Your name').fill('Sam Rivera');
    await sam.page.getByLabel('Choose a password').fill('short');
    await sam.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await sam.page
      .getByRole('alert')
      .filter({ hasText: /password/ })
      .waitFor();
    await sam.page.getByLabel('Choose a password').fill('a long enough passphrase');
    await sam.page.getByRole('button', { name: 'Accept the invitation' }).click();
    await sam.page.getByRole('heading', { name: 'Flags' }).waitFor();
    await sam.page.getByText('viewer', { exact: true }).waitFor();
    // The used link now says so.
    const used = await chromium.open(t.config.urls.publicUrl, { path: new URL(link).pathname });
    await used.page.getByRole('alert').filter({ hasText: 'This invitation link is not valid any more' }).waitFor();
    // ...and offers no form that could only fail.
    expect(await used.page.getByRole('button', { name: 'Accept the invitation' }).count()).toBe(0);
    expect(await used.page.getByLabel('Choose a password').count()).toBe(0);

    // The admin sees Sam, makes them an editor, then removes them.
    await p.reload();
    const members = p.getByRole('region', { name: 'Members' });
    await members.getByRole('cell', { name: 'Sam Rivera', exact: true }).waitFor();
    await members.getByLabel('Role of Sam Rivera').selectOption('editor');
    const samsRoles = async () =>
      (
        await t.db.query(`SELECT role FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = 'sam@acme.example' AND m.left_at IS NULL`)
      ).rows.map((row) => row.role);
    await eventually(async () => (await samsRoles()).join() === 'editor', { what: "Sam's role change" });
    await members.getByRole('button', { name: 'Remove Sam Rivera' }).click();
    await p.getByRole('dialog', { name: 'Remove Sam Rivera?' }).getByRole('button', { name: 'Remove Sam Rivera' }).click();
    await members.getByRole('cell', { name: 'Sam Rivera', exact: true }).waitFor({ state: 'detached' });
    expect(await samsRoles()).toEqual([]);

    // A key for the game servers: shown once, then revoked.
    const keys = p.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('New key name').fill('game-servers-eu');
    await keys.getByRole('button', { name: 'Issue the key' }).click();
    const key = (await keys.locator('code.link').textContent())!;
    expect(key).toMatch(/^fsk_[\w-]{43}$/);
    await api(t, key).get('/flags/config').expect(200);
    await keys.getByRole('button', { name: 'Revoke game-servers-eu' }).click();
    await p.getByRole('dialog', { name: 'Revoke game-servers-eu?' }).getByRole('button', { name: 'Revoke game-servers-eu' }).click();
    await keys
      .getByRole('row')
      .filter({ hasText: 'game-servers-eu' })
      .getByText(/^revoked/)
      .waitFor();
    await api(t, key).get('/flags/config').expect(401);
  });

  it('filters and exports the audit log', async () => {
    const flag = await createFlag(t, org.key, { key: 'xp-rate', type: 'number', value: 1 });
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hi' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 2 }).expect(200);
    const { p } = await signedIn('viewer', { path: '/console/audit' });
    await p.getByText('3 changes').waitFor();
    await p.getByLabel('Action').selectOption('flag.value.set');
    await p.getByRole('button', { name: 'Apply filters' }).click();
    await p.getByText('1 change', { exact: true }).waitFor();
    await p.getByRole('cell', { name: 'value: 1 → 2' }).waitFor();
    const [download] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Export as CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('flag-audit.csv');
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe('id,createdAt,action,actorType,actorId,flagId,flagKey,before,after');
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain(',flag.value.set,apiKey,');
  });

  it('shows storage usage by kind, uploads with a progress bar, shows the gallery, deletes, and purges after a dry run', async () => {
    const { p } = await signedIn('editor', { path: '/console/storage' });
    await p.getByRole('img', { name: /Storage used by kind/ }).waitFor();
    const upload = p.getByRole('region', { name: 'Upload a file' });
    await upload.getByLabel('File').setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: solidPng([200, 30, 30], 64, 48) });
    await upload.getByRole('button', { name: 'Upload' }).click();
    await upload.getByRole('status').filter({ hasText: 'red.png uploaded.' }).waitFor();
    expect(await upload.getByRole('progressbar', { name: 'Upload progress' }).getAttribute('value')).toBe('1');
    const files = p.getByRole('region', { name: 'Files' });
    const image = files.getByRole('img');
    await image.waitFor();
    await p.waitForFunction(() => ((globalThis as any).document.querySelector('.gallery img') as any)?.naturalWidth === 64);
    await p
      .getByRole('region', { name: 'Usage' })
      .getByRole('row', { name: /image 1/ })
      .waitFor();

    await upload.getByLabel('File').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('patch notes') });
    await upload.getByRole('button', { name: 'Upload' }).click();
    await upload.getByRole('status').filter({ hasText: 'notes.txt uploaded.' }).waitFor();
    await files.getByLabel('Kind').selectOption('document');
    // The gallery shows each file's kind and size whatever the filter: the filter has applied once the image is gone.
    await files.getByRole('button', { name: 'Delete file red.png' }).waitFor({ state: 'detached' });
    await files.getByText(/document, 11 B/).waitFor();
    await files.getByRole('button', { name: /^Delete file/ }).click();
    await p.getByRole('dialog', { name: 'Delete this file?' }).getByRole('button', { name: 'Delete the file' }).click();
    await files.getByText('No files of kind document.').waitFor();

    const purge = p.getByRole('region', { name: 'Purge' });
    await purge.getByRole('button', { name: 'Count what would be purged' }).click();
    const dialog = p.getByRole('dialog', { name: 'Purge 1 file?' });
    await dialog.getByText('The dry run found 1 file.').waitFor();
    const stored = (await api(t, org.key).get('/storage/items').expect(200)).body.total;
    expect(stored).toBe(1); // the dry run deleted nothing
    await dialog.getByRole('button', { name: 'Purge 1 file' }).click();
    await purge.getByRole('status').filter({ hasText: 'Purged 1 item(s)' }).waitFor();
    expect((await api(t, org.key).get('/storage/items').expect(200)).body.total).toBe(0);
  });

  it('promotes flags from one organization to another through the dry run report', async () => {
    const production = await createOrganization(t, 'Acme Games (production)');
    await createFlag(t, org.key, { key: 'gems-price', type: 'number', value: 12 });
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hi' });
    await createFlag(t, production.key, { key: 'motd', type: 'string', value: 'Hi' });
    await createFlag(t, production.key, { key: 'live-only', type: 'boolean', value: true });
    const { user, p } = await signedIn('editor', { path: '/console/promote' });
    await p.getByRole('heading', { name: 'Promote flags' }).waitFor();
    await addMember(t, production.id, user.id, 'editor');
    await p.reload();
    await p.getByRole('heading', { name: 'Promote flags' }).waitFor();
    await p
      .getByRole('row', { name: /gems-price/ })
      .getByText('new in Acme Games (production)')
      .waitFor();
    expect(await p.getByRole('checkbox', { name: 'Promote motd' }).isDisabled()).toBe(true); // the same in both
    await p.getByRole('checkbox', { name: 'Promote gems-price' }).check();
    expect(await p.getByRole('button', { name: 'Promote 1 flag' }).isDisabled()).toBe(true); // the dry run comes first
    await p.getByRole('button', { name: 'Preview the promotion (dry run)' }).click();
    const report = p.getByRole('region', { name: 'What the promotion would do' });
    await report.getByText('Created: gems-price').waitFor();
    expect((await api(t, production.key).get('/flags/export').expect(200)).body.flags.map((flag: { key: string }) => flag.key)).toEqual([
      'live-only',
      'motd',
    ]); // the dry run wrote nothing
    await p.getByRole('button', { name: 'Promote 1 flag' }).click();
    await p.getByRole('region', { name: 'Promoted' }).getByText('Created: gems-price').waitFor();
    expect((await api(t, production.key).get('/flags/export').expect(200)).body.flags).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: 'gems-price', value: 12 })]),
    );
    // Switching organization: the flag list is production's now, the promoted flag in it.
    await p.getByLabel('Organization', { exact: true }).selectOption({ label: 'Acme Games (production)' });
    await p.getByRole('heading', { name: 'Flags' }).waitFor();
    await p.getByRole('link', { name: 'live-only' }).waitFor();
    await p.getByRole('link', { name: 'gems-price' }).waitFor();
    expect(await p.getByRole('link', { name: 'motd' }).count()).toBe(1);
    // And back, from the flag list itself: the list is read again, in the organization chosen.
    await p.getByLabel('Organization', { exact: true }).selectOption({ label: 'Acme Games' });
    await p.getByRole('link', { name: 'live-only' }).waitFor({ state: 'detached' });
    await p.getByRole('link', { name: 'gems-price' }).waitFor();
    expect(await p.getByRole('link', { name: 'live-only' }).count()).toBe(0);
  });

  it('shows what game servers receive, with its ETag, and what may be relayed to players', async () => {
    await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true });
    await createFlag(t, org.key, { key: 'anti-cheat', type: 'number', value: 3, runtime: 'server' });
    const { p } = await signedIn('viewer', { path: '/console/served' });
    const etag = (await api(t, org.key).get('/flags/config').expect(200)).headers.etag;
    await p.getByText(etag).waitFor();
    const shared = JSON.parse((await p.getByLabel('Shared flags as JSON').textContent())!);
    expect(shared).toEqual({ 'double-xp': true });
    expect(JSON.parse((await p.getByLabel('Payload as JSON').textContent())!).flags).toHaveLength(2);
  });

  it('lets a viewer read everything and change nothing', async () => {
    const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true });
    const { p } = await signedIn('viewer');
    await p.getByRole('switch', { name: 'double-xp' }).waitFor();
    expect(await p.getByRole('switch', { name: 'double-xp' }).isDisabled()).toBe(true);
    expect(await p.getByRole('link', { name: 'New flag' }).count()).toBe(0);
    await p.getByRole('link', { name: 'double-xp' }).click();
    await p.getByText('Your role (viewer) may read flags but not change them.').waitFor();
    expect(await p.getByLabel('Name').isDisabled()).toBe(true);
    expect(await p.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await p.getByRole('link', { name: 'People and keys' }).click();
    await p.getByRole('region', { name: 'Members' }).waitFor();
    expect(await p.getByRole('region', { name: 'Invitations' }).count()).toBe(0);
    expect(await p.getByRole('button', { name: 'Issue the key' }).count()).toBe(0);
    // Even a request the page did not offer, made from the page with the session's cookie, is refused by the service.
    const status = await p.evaluate(
      async ({ flagId, organizationId }) => {
        const { csrfToken } = (await (await fetch('/v1/auth/session')).json()) as { csrfToken: string };
        const response = await fetch(`/v1/flags/${flagId}`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json', 'X-Organization-Id': organizationId, 'X-CSRF-Token': csrfToken },
          body: JSON.stringify({ archived: true }),
        });
        return { status: response.status, error: ((await response.json()) as { error: string }).error };
      },
      { flagId: flag.id, organizationId: org.id },
    );
    // The role's refusal, not a missing CSRF token's.
    expect(status).toEqual({ status: 403, error: 'FORBIDDEN' });
    expect(await flagNamed('double-xp')).toMatchObject({ id: flag.id, value: true, archived: false });
  });

  it('has no serious or critical accessibility violation on any page, in light and dark, and keeps a screenshot of each', async () => {
    const flag = await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { rare: [1, 2] } });
    await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true });
    const user = await member('admin');
    // A second organization, so that the promotion page has a target.
    const production = await createOrganization(t, 'Acme Games (production)');
    await addMember(t, production.id, user.id, 'editor');
    const shots: string[] = [];
    for (const theme of ['light', 'dark'] as const) {
      const page = await chromium.open(t.config.urls.publicUrl, { theme });
      const p = page.page;
      const check = async (name: string) => {
        expect({ page: name, theme, violations: await page.accessibilityViolations() }).toEqual({ page: name, theme, violations: [] });
        shots.push(await page.screenshot(name, theme));
      };
      await p.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
      await check('sign-in');
      await page.signIn(user.email, PASSWORD);
      await p.getByRole('switch', { name: 'double-xp' }).waitFor();
      await check('flags');
      await p.getByRole('link', { name: 'New flag' }).click();
      await p.getByRole('heading', { name: 'New flag' }).waitFor();
      // runtime is explained where it is chosen (issue 33): the hint under the field is its description, in the screenshot.
      const runtimeHint = await p.locator(`[id="${await p.getByLabel('Runtime').getAttribute('aria-describedby')}"]`).textContent();
      expect(runtimeHint).toMatch(
        /^Who may read the flag\. Shared: game servers get it and may pass it on to players.*Server: only game servers get it; choose it for secrets/,
      );
      await check('new-flag');
      await p.goto(`${t.config.urls.publicUrl}/console/flags/${flag.id}`);
      await p.getByRole('heading', { name: 'loot-table' }).waitFor();
      await check('flag');
      await p.getByRole('button', { name: 'Delete' }).click();
      await p.getByRole('dialog').waitFor();
      await check('flag-delete');
      await p.keyboard.press('Escape');
      await p.getByRole('link', { name: 'People and keys' }).click();
      await p.getByRole('region', { name: 'API keys' }).waitFor();
      await check('organization');
      for (const [link, name, ready] of [
        ['Audit log', 'audit', 'Apply filters'],
        ['Storage', 'storage', 'Count what would be purged'],
        ['Promote', 'promote', 'Preview the promotion (dry run)'],
        ['What servers receive', 'served', null],
      ] as const) {
        await p.getByRole('link', { name: link, exact: true }).click();
        if (ready) await p.getByRole('button', { name: ready }).waitFor();
        else await p.getByRole('region', { name: 'What may be relayed to players' }).waitFor();
        await check(name);
      }
      const invitation = await chromium.open(t.config.urls.publicUrl, { theme, path: '/console/invitations/some-token' });
      await invitation.page.getByRole('heading', { name: 'Join the studio on Flagstore' }).waitFor();
      expect(await invitation.accessibilityViolations()).toEqual([]);
      shots.push(await invitation.screenshot('invitation', theme));
    }
    expect(shots).toHaveLength(22);
  });
});
