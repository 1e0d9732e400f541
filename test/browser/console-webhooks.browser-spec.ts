import type { Page } from 'playwright-core';
import { createFlag } from '../factories/flags.factory';
import { createOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createTeam, PASSWORD, signIn } from '../factories/people.factory';
import { eventually } from '../support/eventually';
import { ReceivedWebhook, verifyStandardWebhook, WebhookReceiver } from '../support/servers/webhook-receiver';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';
import { Theme } from './support/console-page';

/** Loopback receivers need both: the operator's switches for a studio's own network. */
const LOOPBACK = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/**
 * Webhooks in the console (issue 35; decisions.md, "Webhooks (turn 5)"): an admin adds an endpoint and copies its
 * secret, shown once; test events reach a real receiver on loopback that verifies their Standard Webhooks signature
 * with that secret; a failed attempt shows its answer; a 410 disables the endpoint and the page says why; enabled
 * again, the secret rotated, an event redelivered, the endpoint deleted. Editors see no Webhooks; a `?org=` link lands
 * in its organization. In Chromium against the real service on a real clock (deliveries go out within about 250 ms,
 * the first retry after about 5 s), with axe-core and screenshots.
 */
describe('webhooks in the console', () => {
  let chromium: ConsoleBrowser;
  let t: TestApp;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    await receiver.start();
    t = await createTestApp(LOOPBACK);
  });
  // The browser first: its pages' event streams would hold the app's shutdown.
  afterAll(async () => {
    await closeEach(chromium);
    await closeEach(t, { close: () => receiver.stop() });
  });
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  async function open(email: string, options: { theme?: Theme; path?: string } = {}) {
    const page = await chromium.open(t.config.urls.publicUrl, options);
    await page.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.config.urls.publicUrl });
    await page.signIn(email, PASSWORD);
    // Signed in: the frame of every signed-in page (the sign-in page has a heading too).
    await page.page.getByRole('navigation', { name: 'Main' }).waitFor();
    return page;
  }

  const team = (label: string) => createTeam(t, label);

  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const clipboard = (p: Page) => p.evaluate(() => (globalThis as any).navigator.clipboard.readText() as Promise<string>);
  /** The event id a "… queued." status names. */
  const queuedId = async (p: Page, what: RegExp) => {
    const status = p.getByRole('status').filter({ hasText: what });
    await status.waitFor();
    return /msg_[A-Za-z0-9_-]+/.exec((await status.textContent()) ?? '')![0];
  };
  /** An event's line of the deliveries table with that status (its Status cell, not its folded answer, says so). */
  const deliveryRow = (p: Page, eventId: string, status: string) =>
    p
      .getByRole('region', { name: 'Deliveries' })
      .getByRole('row')
      .filter({ hasText: eventId })
      .filter({ has: p.getByRole('cell', { name: status, exact: true }) });
  const deliveryOf = (eventId: string, answered: number) =>
    receiver.received.find((delivery) => delivery.id === eventId && delivery.answered === answered) as ReceivedWebhook | undefined;

  it('adds an endpoint, its secret verifies a test delivery; a failure, a 410, enable, rotate, redeliver, delete', async () => {
    const { org, maya } = await team('journey');
    receiver.clear();
    receiver.respond = () => 200;
    const admin = await open(maya.email);
    const p = admin.page;

    // The admin's navigation has Webhooks, and at 1,280 px all eight links fit on one row (the navigation has a row of
    // its own, below the organization and the person).
    const nav = p.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Webhooks' }).waitFor();
    const rows = await nav
      .getByRole('link')
      .evaluateAll((links) => links.map((link) => ({ name: link.textContent, top: Math.round(link.getBoundingClientRect().top) })));
    expect(rows).toHaveLength(8);
    expect(rows.at(-1)!.name).toBe('Webhooks');
    expect(new Set(rows.map((row) => row.top)).size).toBe(1);
    await nav.getByRole('link', { name: 'Webhooks' }).click();
    await p.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await p.getByText('No endpoints yet: add one below.').waitFor();

    // A URL the API refuses: its message beside the URL field.
    const form = p.getByRole('region', { name: 'New endpoint' });
    await form.getByLabel('URL').fill('ftp://127.0.0.1/hook');
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    const urlError = form.getByRole('alert');
    await urlError.waitFor();
    expect(await urlError.textContent()).toMatch(/^url /);
    expect(await form.getByLabel('URL').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('URL').fill(receiver.url('/hooks/flagstore'));
    await form.getByLabel('Description (optional)').fill('Deploy bot');
    const events = form.getByRole('group', { name: 'Events' });
    expect(await events.getByRole('group', { name: 'Flags' }).getByRole('checkbox').isChecked()).toBe(true);
    await events
      .getByRole('group', { name: 'Change requests' })
      .getByLabel(/^Opened/)
      .check();
    await form.getByLabel('Format').selectOption({ label: 'Standard Webhooks JSON (signed)' });
    await form.getByRole('button', { name: 'Add endpoint' }).click();

    // The secret, once, with a copy button.
    const shortened = `127.0.0.1:${receiver.port}/hooks/flagstore`;
    const panel = p.getByRole('region', { name: `Signing secret of ${shortened}` });
    await panel.waitFor();
    await panel.getByText('Copy it now: it will not be shown again.').waitFor();
    const shown = (await panel.locator('code.link').textContent())!;
    expect(shown).toMatch(SECRET);
    await panel.getByRole('button', { name: `Copy the secret of ${shortened}` }).click();
    await panel.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    const secret = await clipboard(p);
    expect(secret).toBe(shown);
    const list = p.getByRole('region', { name: 'Endpoints' });
    const row = list.getByRole('row').filter({ hasText: shortened });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      `${shortened}Deploy bot`,
      'Standard Webhooks JSON (signed)',
      'flag.changed, change-request.opened',
      'Enabled',
      'none yet',
    ]);
    expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
    await admin.screenshot('webhooks-secret', 'light');
    const endpointId = (
      await asSession(t, await signIn(t, maya.email), org.id)
        .get('/organization/webhooks')
        .expect(200)
    ).body.results[0].id as string;

    // A test event: delivered, verified with the copied secret, shown as succeeded with 200.
    await row.getByRole('link', { name: shortened }).click();
    await p.getByRole('heading', { name: 'Deploy bot', level: 1 }).waitFor();
    await p.getByRole('button', { name: 'Send test event' }).click();
    const firstTest = await queuedId(p, /^Test event msg_\S+ queued\.$/);
    await receiver.waitFor(1);
    expect(receiver.received[0]).toMatchObject({ id: firstTest, answered: 200, body: { type: 'webhook.test' } });
    expect(verifyStandardWebhook(secret, receiver.received[0], nowSeconds())).toBe(true);
    const succeeded = deliveryRow(p, firstTest, 'succeeded');
    await succeeded.waitFor();
    expect(await succeeded.locator('td').nth(3).textContent()).toBe('200');
    expect(await succeeded.locator('td').nth(4).textContent()).toMatch(/^\d+ ms$/);

    // The receiver fails: the attempt shows as failed, with what it answered.
    receiver.respond = () => ({ status: 500, body: 'database down: try again later' });
    await p.getByRole('button', { name: 'Send test event' }).click();
    const failingTest = await queuedId(p, /^Test event msg_\S+ queued\.$/);
    expect(failingTest).not.toBe(firstTest);
    const failed = deliveryRow(p, failingTest, 'failed');
    await failed.waitFor();
    expect(await failed.locator('td').nth(3).textContent()).toBe('500');
    await failed.getByText('Answer', { exact: true }).click();
    await failed.getByText('database down: try again later').waitFor();

    // The retry (about 5 s later) succeeds; the flag change behind it is answered 410 Gone: the endpoint is disabled, and says why.
    receiver.respond = (delivery) => (delivery.body?.type === 'flag.changed' ? 410 : 200);
    await createFlag(t, org.key, { key: 'xp-multiplier', type: 'number', value: 2 });
    await receiver.waitFor(4, 15_000);
    const gone = receiver.received.find((delivery) => delivery.answered === 410)!;
    expect(gone.body.type).toBe('flag.changed');
    expect(deliveryOf(failingTest, 200)).toBeDefined();
    const owner = await signIn(t, maya.email);
    await eventually(async () => !(await asSession(t, owner, org.id).get(`/organization/webhooks/${endpointId}`)).body.enabled, {
      what: 'the endpoint disabled by the 410',
    });
    await p.getByRole('button', { name: 'Refresh deliveries' }).click();
    const disabled = p.locator('.notice.warning');
    await disabled.getByText(/410 Gone/).waitFor();
    await disabled.getByText('Its events are recorded as skipped until it is enabled again').waitFor();
    await deliveryRow(p, gone.id, 'failed').waitFor();
    expect(await p.getByRole('button', { name: 'Send test event' }).isDisabled()).toBe(true);
    expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
    await admin.screenshot('webhook-endpoint-disabled', 'light');
    expect(
      await deliveryRow(p, gone.id, 'failed')
        .getByRole('button', { name: `Redeliver ${gone.id}` })
        .isDisabled(),
    ).toBe(true);

    // The list says so too.
    await p.getByRole('link', { name: 'All webhooks' }).first().click();
    const disabledRow = p.getByRole('region', { name: 'Endpoints' }).getByRole('row').filter({ hasText: shortened });
    await disabledRow.getByText(/^Disabled/).waitFor();
    expect(await disabledRow.locator('td').nth(3).textContent()).toBe('Disabled: the endpoint answered 410 Gone');
    expect(await disabledRow.locator('td').nth(4).textContent()).toMatch(/^failed 410/);
    expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
    await admin.screenshot('webhooks-list', 'light');

    // Enabled again.
    await disabledRow.getByRole('link', { name: shortened }).click();
    await p.getByRole('button', { name: 'Enable' }).click();
    await p.getByRole('status').filter({ hasText: 'Enabled: deliveries start from the next event.' }).waitFor();
    await p.getByRole('button', { name: 'Disable' }).waitFor();
    expect(await p.locator('.notice.warning').count()).toBe(0);

    // Rotated: the new secret once; for 24 h deliveries carry both signatures.
    await p.getByRole('button', { name: 'Rotate secret' }).click();
    const rotateDialog = p.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await rotateDialog.waitFor();
    await rotateDialog.getByText('For 24 hours every delivery is signed with both').waitFor();
    await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = p.getByRole('region', { name: 'New signing secret' });
    await rotated.waitFor();
    await rotated.getByText(/The old secret keeps signing too, beside this one, for 24 hours \(until .+\)/).waitFor();
    await rotated.getByRole('button', { name: /^Copy the new secret/ }).click();
    await rotated.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    const newSecret = await clipboard(p);
    expect(newSecret).toMatch(SECRET);
    expect(newSecret).not.toBe(secret);
    expect(await rotated.locator('code.link').textContent()).toBe(newSecret);

    // The 410's event, redelivered: the same webhook-id, signed by both secrets.
    receiver.respond = () => 200;
    const before = receiver.received.length;
    await deliveryRow(p, gone.id, 'failed')
      .getByRole('button', { name: `Redeliver ${gone.id}` })
      .click();
    await p
      .getByRole('status')
      .filter({ hasText: `Redelivery of ${gone.id} queued.` })
      .waitFor();
    await receiver.waitFor(before + 1);
    const again = receiver.received[before];
    expect(again).toMatchObject({ id: gone.id, answered: 200, body: { type: 'flag.changed' } });
    expect(again.signatures).toHaveLength(2);
    expect(verifyStandardWebhook(newSecret, again, nowSeconds())).toBe(true);
    expect(verifyStandardWebhook(secret, again, nowSeconds())).toBe(true);
    await deliveryRow(p, gone.id, 'succeeded').waitFor();
    await p.getByText(/^The previous secret also signs deliveries until /).waitFor();
    expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
    await admin.screenshot('webhook-endpoint', 'light');

    // The same page in dark, as another tab of the admin's sees it.
    const dark = await open(maya.email, { theme: 'dark', path: `/console/webhooks/${endpointId}` });
    await deliveryRow(dark.page, gone.id, 'succeeded').waitFor();
    expect({ violations: await dark.accessibilityViolations() }).toEqual({ violations: [] });
    await dark.screenshot('webhook-endpoint', 'dark');

    // Deleted, after a confirmation: back on the list, nothing left.
    await p.getByRole('button', { name: 'Delete endpoint' }).click();
    const deleteDialog = p.getByRole('dialog', { name: 'Delete this endpoint?' });
    await deleteDialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await p.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await p
      .getByRole('status')
      .filter({ hasText: `Deleted the endpoint ${shortened}.` })
      .waitFor();
    await p.getByText('No endpoints yet: add one below.').waitFor();
    expect(
      (
        await asSession(t, await signIn(t, maya.email), org.id)
          .get('/organization/webhooks')
          .expect(200)
      ).body.results,
    ).toEqual([]);
  }, 120_000);

  it('shows an editor no Webhooks in the navigation, and no endpoints at its address', async () => {
    const { sam } = await team('editor');
    const editor = await open(sam.email);
    const p = editor.page;
    const nav = p.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'People and keys' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await p.goto(`${t.config.urls.publicUrl}/console/webhooks`);
    await p.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await p.getByText('Only the organization’s admins see and change its webhooks.').waitFor();
    expect(await p.getByRole('region', { name: 'New endpoint' }).count()).toBe(0);
  });

  it('switches to the organization a ?org= link names when the person is a member, and ignores one they are not', async () => {
    const { org: first, maya } = await team('first');
    const second = await createOrganization(t, 'Acme Games second');
    const strangers = await createOrganization(t, 'Someone else’s studio');
    await addMember(t, second.id, maya.id, 'editor');
    const flag = await createFlag(t, second.key, { key: 'double-xp', type: 'boolean', value: false });

    // Signed out, a webhook message's link: signed in, she lands on that flag in its organization.
    const page = await open(maya.email, { path: `/console/flags/${flag.id}?org=${second.id}` });
    const p = page.page;
    await p.getByRole('heading', { name: 'double-xp', level: 1 }).waitFor();
    const switcher = p.getByRole('combobox', { name: 'Organization' });
    expect(await switcher.inputValue()).toBe(second.id);
    expect(new URL(p.url()).pathname).toBe(`/console/flags/${flag.id}`);
    expect(new URL(p.url()).search).toBe('');

    // Signed in, a link into the other one (a new page load): switched there, the parameter dropped.
    await p.goto(`${t.config.urls.publicUrl}/console/change-requests?org=${first.id}&state=open`);
    await p.getByRole('heading', { name: 'Change requests', level: 1 }).waitFor();
    expect(await switcher.inputValue()).toBe(first.id);
    expect(new URL(p.url()).search).toBe('?state=open');

    // An organization she is not in: she stays where she is, and nothing says more.
    await p.goto(`${t.config.urls.publicUrl}/console/flags?org=${strangers.id}`);
    await p.getByRole('heading', { name: 'Flags', level: 1 }).waitFor();
    expect(await switcher.inputValue()).toBe(first.id);
    expect(new URL(p.url()).search).toBe('');
    expect(await p.getByRole('alert').count()).toBe(0);
  });
});
