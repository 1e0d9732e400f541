import { createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, PASSWORD, signIn } from '../factories/people.factory';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';
import { Theme } from './support/console-page';

/**
 * Organizations made by their people, in the console (decisions.md, "A studio's own deployment"): the switcher's
 * "New organization" with the members of an organization one administers, then its settings (rename, delete, the
 * refusal of a non-empty one), in Chromium against the real service, with axe-core and screenshots in light and dark.
 */
describe('organizations in the console', () => {
  let chromium: ConsoleBrowser;
  let t: TestApp;
  /** The same deployment's database under ORGANIZATION_CREATION=anyone. */
  let anyone: TestApp;

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    t = await createTestApp();
    anyone = await createTestApp({ ORGANIZATION_CREATION: 'anyone' }, { sameDatabaseAs: t });
  });
  // The browser first: its pages' event streams would hold the apps' shutdown.
  afterAll(async () => {
    await closeEach(chromium);
    await closeEach(anyone, t);
  });
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  async function open(email: string, theme: Theme = 'light') {
    const page = await chromium.open(t.config.urls.publicUrl, { theme });
    await page.signIn(email, PASSWORD);
    return page;
  }

  const organizationRow = async (id: string) =>
    (await t.db.query('SELECT name FROM organizations WHERE id = $1', [id])).rows[0] as { name: string } | undefined;

  it.each(['light', 'dark'] as Theme[])('creates an organization with the team of another, renames it and deletes it (%s)', async (theme) => {
    const production: TestOrganization = await createOrganization(t, 'Acme Games (production)');
    const maya = await createUser(t, { name: `Maya Lin ${theme}` });
    const sam = await createUser(t, { name: `Sam Ortiz ${theme}` });
    const lee = await createUser(t, { name: `Lee Park ${theme}` });
    await addMember(t, production.id, maya.id, 'admin');
    await addMember(t, production.id, sam.id, 'editor');
    await addMember(t, production.id, lee.id, 'viewer');
    // Maya is also an editor elsewhere: that organization's team is not hers to copy.
    const elsewhere = await createOrganization(t, 'Someone else’s studio');
    await addMember(t, elsewhere.id, maya.id, 'editor');

    const page = await open(maya.email, theme);
    const p = page.page;
    await p.getByRole('heading', { name: 'Flags' }).waitFor();
    const switcher = p.getByRole('combobox', { name: 'Organization' });
    await switcher.locator('option', { hasText: 'New organization…' }).waitFor({ state: 'attached' });
    expect(await switcher.locator('option').allTextContents()).toEqual(['Acme Games (production)', 'Someone else’s studio', 'New organization…']);
    await switcher.selectOption({ label: 'New organization…' });
    const dialog = p.getByRole('dialog', { name: 'New organization' });
    await dialog.waitFor();
    const copyFrom = dialog.getByLabel('Copy members from');
    const choices = await copyFrom.locator('option').allTextContents();
    expect(choices).toEqual(['Nobody: just me', 'Acme Games (production)']);
    await dialog.getByLabel('Name').fill('Acme Games (staging)');
    await copyFrom.selectOption({ label: 'Acme Games (production)' });
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('organization-new', theme);
    await dialog.getByRole('button', { name: 'Create organization' }).click();

    // The console switches to it: the switcher names it, and its members are the production team.
    await p.waitForFunction(() => {
      const select = (globalThis as any).document.querySelector('select[aria-label="Organization"]');
      return select && select.selectedOptions[0]?.textContent === 'Acme Games (staging)';
    });
    const staging = (await t.db.query(`SELECT id FROM organizations WHERE created_by = $1`, [maya.id])).rows[0].id as string;
    expect(await switcher.inputValue()).toBe(staging);
    await p.getByRole('status').filter({ hasText: '“Acme Games (staging)” with the members of “Acme Games (production)”' }).waitFor();
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('organization-created', theme);
    await p.getByRole('link', { name: 'People and keys' }).click();
    const members = p.getByRole('region', { name: 'Members' });
    for (const name of [maya.name, sam.name, lee.name]) await members.getByText(name).first().waitFor();
    const roles = (await t.db.query('SELECT user_id, role FROM memberships WHERE organization_id = $1 ORDER BY role', [staging])).rows;
    expect(roles).toEqual([
      { user_id: maya.id, role: 'admin' },
      { user_id: sam.id, role: 'editor' },
      { user_id: lee.id, role: 'viewer' },
    ]);

    // Settings: rename.
    const settings = p.getByRole('region', { name: 'Settings' });
    await settings.getByLabel('Organization name').fill('Acme Games (live)');
    await settings.getByRole('button', { name: 'Rename' }).click();
    await settings.getByRole('status').filter({ hasText: 'Renamed.' }).waitFor();
    await p.getByRole('heading', { name: 'Acme Games (live)', level: 1 }).waitFor();
    expect(await switcher.locator('option:checked').textContent()).toBe('Acme Games (live)');
    expect(await organizationRow(staging)).toEqual({ name: 'Acme Games (live)' });

    // Delete while it has a flag: refused, readably, and nothing is gone.
    const withKey = await createKey(staging, maya.email);
    await createFlag(t, withKey, { key: 'double-xp', type: 'boolean', value: false });
    await settings.getByRole('button', { name: 'Delete organization' }).click();
    const confirm = p.getByRole('dialog', { name: 'Delete Acme Games (live)?' });
    await confirm.waitFor();
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('organization-delete-confirm', theme);
    await confirm.getByRole('button', { name: 'Delete organization' }).click();
    await settings.getByRole('alert').filter({ hasText: 'Not deleted: the organization still has 1 flag.' }).waitFor();
    expect(await organizationRow(staging)).toEqual({ name: 'Acme Games (live)' });
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('organization-settings', theme);

    // Without its flag: deleted, and the console moves to the organization that is left.
    await t.db.query(`DELETE FROM flags WHERE organization_id = $1`, [staging]);
    await settings.getByRole('button', { name: 'Delete organization' }).click();
    await confirm.getByRole('button', { name: 'Delete organization' }).click();
    await p.getByRole('heading', { name: 'Flags', level: 1 }).waitFor();
    await p.getByRole('status').filter({ hasText: 'Deleted “Acme Games (live)”.' }).waitFor();
    expect(await organizationRow(staging)).toBeUndefined();
    expect(await switcher.locator('option').allTextContents()).toEqual(['Acme Games (production)', 'Someone else’s studio', 'New organization…']);
    await page.screenshot('organization-deleted', theme);
  });

  it('offers no "New organization" to someone who administers no organization (ORGANIZATION_CREATION=admins)', async () => {
    const org = await createOrganization(t, 'Acme Games');
    const editor = await createUser(t, { name: 'Edi Tor' });
    await addMember(t, org.id, editor.id, 'editor');
    const page = await open(editor.email);
    await page.page.getByRole('heading', { name: 'Flags' }).waitFor();
    // One organization and nothing to create: no switcher at all, only its name.
    expect(await page.page.getByRole('combobox', { name: 'Organization' }).count()).toBe(0);
    expect(await page.page.getByText('New organization…').count()).toBe(0);
    await page.page.getByRole('banner').getByText('Acme Games', { exact: true }).waitFor();
  });

  it('welcomes someone with no organization yet (ORGANIZATION_CREATION=anyone) and lets them create their first', async () => {
    const newcomer = await createUser(t, { name: 'Nia Newcomer' });
    const page = await chromium.open(anyone.config.urls.publicUrl);
    await page.signIn(newcomer.email, PASSWORD);
    const p = page.page;
    await p.getByRole('heading', { name: 'No organization yet', level: 1 }).waitFor();
    await p.getByText('you are not a member of any organization. Create your own, or ask an admin to invite you.').waitFor();
    expect({ violations: await page.accessibilityViolations() }).toEqual({ violations: [] });
    await page.screenshot('organization-none', 'light');
    await p.getByRole('main').getByRole('button', { name: 'New organization' }).click();
    const dialog = p.getByRole('dialog', { name: 'New organization' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Copy members from').locator('option').allTextContents()).toEqual(['Nobody: just me']);
    await dialog.getByLabel('Name').fill('Nia’s sandbox');
    await dialog.getByRole('button', { name: 'Create organization' }).click();
    await p.getByRole('heading', { name: 'Flags', level: 1 }).waitFor();
    await p.getByRole('status').filter({ hasText: 'Created “Nia’s sandbox”.' }).waitFor();
    expect(await p.getByRole('combobox', { name: 'Organization' }).locator('option:checked').textContent()).toBe('Nia’s sandbox');
  });

  /** An API key of `organizationId`, issued by its admin through the API (the console's own page issues them too). */
  async function createKey(organizationId: string, email: string): Promise<string> {
    const who = await signIn(t, email);
    const created = await asSession(t, who, organizationId)
      .post('/organization/api-keys')
      .send({ name: 'server', permissions: ['FLAGS_READ', 'FLAGS_WRITE'] })
      .expect(201);
    return created.body.key as string;
  }
});
