import { api, createFlag, storedFlagVersion } from '../factories/flags.factory';
import { createOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createTeam, createUser, PASSWORD, signIn } from '../factories/people.factory';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach } from './support/chromium';
import { ConsoleBrowser } from './support/console-browser';
import { Theme } from './support/console-page';

/**
 * Change requests in the console (issue 34; decisions.md, "Change requests (turn 5)"): an admin turns review on,
 * an editor's Save becomes "Request review", a second person in another browser approves, the editor applies, and
 * the flag's history says so; an admin's apply without approval asks for a reason; a stale request is explained; a
 * promotion into an organization that requires review is a change request there.
 * In Chromium against the real service, with axe-core and screenshots.
 */
describe('change requests in the console', () => {
  let chromium: ConsoleBrowser;
  let t: TestApp;

  beforeAll(async () => {
    chromium = await ConsoleBrowser.launch();
    t = await createTestApp();
  });
  afterAll(async () => {
    await closeEach(chromium);
    await closeEach(t);
  });
  afterEach(async () => expect(await chromium.closePages()).toEqual([]));

  async function open(email: string, theme: Theme = 'light', path?: string) {
    const page = await chromium.open(t.config.urls.publicUrl, { theme, path });
    await page.signIn(email, PASSWORD);
    await page.page.getByRole('heading', { level: 1 }).first().waitFor();
    return page;
  }

  const team = (label: string) => createTeam(t, label);

  const flagValue = async (id: string) => (await t.db.query('SELECT value FROM flags WHERE id = $1', [id])).rows[0].value as unknown;

  it.each(['light', 'dark'] as Theme[])(
    'review on, a request from the flag form, approved in another browser, applied, in the history (%s)',
    async (theme) => {
      const { org, maya, sam } = await team(theme);
      const flag = await createFlag(t, org.key, { key: 'xp-multiplier', name: 'XP multiplier', type: 'number', value: 1 });

      // The admin turns review on: one approval, not by the author.
      const admin = await open(maya.email, theme, '/console/organization');
      const a = admin.page;
      const review = a.getByRole('region', { name: 'Review of flag changes' });
      await review.getByText('Never changed: review is off by default.').waitFor();
      await review.getByLabel('Require review: flag changes go through change requests').check();
      await review.getByLabel('Approvals a change request needs').selectOption('1');
      await review.getByRole('button', { name: 'Save review setting' }).click();
      await review.getByRole('status').filter({ hasText: 'Review setting saved.' }).waitFor();
      const row = review.getByRole('row').filter({ hasText: maya.name });
      await row.waitFor();
      expect(await row.locator('td').allTextContents()).toEqual([
        expect.any(String),
        maya.name,
        'review off',
        'review required, 1 approval, not by the author',
      ]);
      expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
      await admin.screenshot('review-setting', theme);

      // The editor's Save is now "Request review", with a title.
      const editor = await open(sam.email, theme, `/console/flags/${flag.id}`);
      const e = editor.page;
      await e.getByRole('heading', { name: 'xp-multiplier', level: 1 }).waitFor();
      await e.getByRole('button', { name: 'Request review', exact: true }).waitFor();
      expect(await e.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
      await e.getByLabel('Value', { exact: true }).fill('2');
      await e.getByLabel('Change request title').fill('XP weekend: multiplier 2');
      await e.getByRole('button', { name: 'Request review', exact: true }).click();
      await e.getByRole('heading', { name: 'XP weekend: multiplier 2', level: 1 }).waitFor();
      await e.getByRole('status').filter({ hasText: 'Review requested' }).waitFor();
      const changes = e.getByRole('region', { name: /What it changes/ });
      expect(await changes.getByRole('listitem').first().textContent()).toBe('Value: 1 → 2');
      await e.getByText('You made this request: somebody else reviews it.').waitFor();
      expect(await e.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      expect(await flagValue(flag.id)).toBe(1);
      expect({ violations: await editor.accessibilityViolations() }).toEqual({ violations: [] });
      await editor.screenshot('change-request-open', theme);

      // The admin, in her own browser, sees one request awaiting her, and approves it with a comment.
      const nav = a.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Change requests 1 awaiting your review' }).waitFor();
      await nav.getByRole('link', { name: /^Change requests/ }).click();
      await a.getByRole('heading', { name: 'Change requests', level: 1 }).waitFor();
      await a.getByRole('link', { name: 'XP weekend: multiplier 2' }).waitFor();
      await admin.screenshot('change-requests', theme);
      await a.getByRole('link', { name: 'XP weekend: multiplier 2' }).click();
      await a.getByRole('heading', { name: 'XP weekend: multiplier 2', level: 1 }).waitFor();
      await a.getByLabel('Comment (optional)').fill('2, not 20: good');
      await a.getByRole('button', { name: 'Approve' }).click();
      await a.getByRole('status').filter({ hasText: 'Approved.' }).waitFor();
      await a.getByText('approved: ready to apply').waitFor();
      await a.getByRole('region', { name: 'Reviews' }).getByText('2, not 20: good', { exact: false }).waitFor();

      // The editor's page hears of it and offers Apply; applied, the flag is 2.
      await e.getByText('approved: ready to apply').waitFor();
      await e.getByRole('button', { name: 'Apply', exact: true }).click();
      await e.getByRole('status').filter({ hasText: 'Applied: the flags are changed.' }).waitFor();
      expect(await flagValue(flag.id)).toBe(2);
      const timeline = e.getByRole('region', { name: 'Timeline' });
      expect(await timeline.getByRole('listitem').allTextContents()).toEqual([
        expect.stringContaining(`${sam.name} opened the request`),
        expect.stringMatching(new RegExp(`^${maya.name} approved · .*“2, not 20: good”$`)),
        expect.stringContaining(`${sam.name} applied it`),
      ]);
      expect({ violations: await editor.accessibilityViolations() }).toEqual({ violations: [] });
      await editor.screenshot('change-request-applied', theme);

      // The flag's history tells it.
      await e.goto(`${t.config.urls.publicUrl}/console/flags/${flag.id}`);
      const history = e.getByRole('region', { name: 'History' });
      await history.getByText(`${sam.name}`).first().waitFor();
      await history.getByText('changed the value, by applying a change request').waitFor();
      await editor.screenshot('change-request-history', theme);

      // Under review, restoring an earlier version is proposed too.
      await history
        .getByRole('button', { name: /^Restore this version/ })
        .last()
        .click();
      await e.getByRole('dialog').getByRole('button', { name: 'Request review of this restore' }).click();
      await e.getByRole('heading', { name: /^Restore xp-multiplier to the version of /, level: 1 }).waitFor();
      expect(
        await e
          .getByRole('region', { name: /What it changes/ })
          .getByRole('listitem')
          .first()
          .textContent(),
      ).toBe('Value: 2 → 1');
      expect(await flagValue(flag.id)).toBe(2);
    },
  );

  it('an admin applies without approval, giving a reason; a request made stale is explained, and its author refreshes it', async () => {
    const { org, maya, sam } = await team('override');
    const flag = await createFlag(t, org.key, { key: 'loot-rate', name: 'Loot rate', type: 'number', value: 5 });
    const other = await createFlag(t, org.key, { key: 'event-banner', name: 'Event banner', type: 'string', value: 'none' });
    await asSession(t, await signIn(t, maya.email), org.id)
      .put('/organization/review')
      .send({ required: true, approvals: 1, selfApproval: false })
      .expect(200);

    // Sam asks for two changes (one per request) from the flag forms.
    const editor = await open(sam.email, 'light', `/console/flags/${flag.id}`);
    const e = editor.page;
    await e.getByLabel('Value', { exact: true }).fill('6');
    await e.getByLabel('Change request title').fill('Loot rate 6');
    await e.getByRole('button', { name: 'Request review', exact: true }).click();
    await e.getByRole('heading', { name: 'Loot rate 6', level: 1 }).waitFor();
    await e.goto(`${t.config.urls.publicUrl}/console/flags/${other.id}`);
    await e.getByLabel('Value', { exact: true }).fill('halloween');
    await e.getByLabel('Change request title').fill('Halloween banner');
    await e.getByRole('button', { name: 'Request review', exact: true }).click();
    await e.getByRole('heading', { name: 'Halloween banner', level: 1 }).waitFor();
    const halloween = e.url();

    // Maya applies the first without approval: a reason is asked for.
    const admin = await open(maya.email, 'light', '/console/change-requests');
    const a = admin.page;
    await a.getByRole('link', { name: 'Loot rate 6' }).click();
    await a.getByRole('button', { name: 'Apply without approval…' }).click();
    const dialog = a.getByRole('dialog', { name: 'Apply without approval?' });
    await dialog.waitFor();
    expect(await dialog.getByRole('button', { name: 'Apply without approval' }).isDisabled()).toBe(true);
    await dialog.getByLabel('Reason').fill('Loot rate at 50 in production; fixing now');
    expect({ violations: await admin.accessibilityViolations() }).toEqual({ violations: [] });
    await admin.screenshot('change-request-override', 'light');
    await dialog.getByRole('button', { name: 'Apply without approval' }).click();
    await a.getByRole('status').filter({ hasText: 'Applied without approval' }).waitFor();
    await a.getByRole('note').filter({ hasText: 'Reason: Loot rate at 50 in production; fixing now' }).waitFor();
    expect(await flagValue(flag.id)).toBe(6);

    // The second request goes stale (the flag changed elsewhere), is approved anyway, and Apply is refused readably.
    await api(t, org.key).patch(`/flags/${other.id}`).send({ name: 'Event banner text' }).expect(200);
    await a.goto(halloween);
    await a.getByRole('button', { name: 'Approve' }).click();
    await a.getByRole('status').filter({ hasText: 'Approved.' }).waitFor();
    await e.getByText('approved: ready to apply').waitFor();
    await e.getByRole('button', { name: 'Apply', exact: true }).click();
    const refused = e.getByRole('alert').filter({ hasText: 'Not applied: flags in this request changed after it was made' });
    await refused.waitFor();
    await refused.getByText('event-banner: its name changed since the request was made').waitFor();
    expect(await flagValue(other.id)).toBe('none');
    expect({ violations: await editor.accessibilityViolations() }).toEqual({ violations: [] });
    await editor.screenshot('change-request-stale', 'light');

    // Its author refreshes it to the flag as it is now (the rename kept, its own change still proposed): open again,
    // its approval cleared.
    await e.getByRole('button', { name: 'Refresh the request to the flags as they are now' }).click();
    await e.getByRole('status').filter({ hasText: 'Refreshed' }).waitFor();
    await e.getByText('open: awaiting review').waitFor();
    const request = (await t.db.query(`SELECT id FROM change_requests WHERE title = 'Halloween banner'`)).rows[0].id as string;
    const refreshed = await asSession(t, await signIn(t, sam.email), org.id)
      .get(`/change-requests/${request}`)
      .expect(200);
    expect(refreshed.body.changes[0].after).toMatchObject({ name: 'Event banner text', value: 'halloween' });

    // A new flag, under review, is proposed: nothing is created until the request is applied.
    await e.goto(`${t.config.urls.publicUrl}/console/flags/new`);
    await e.getByLabel('Key').fill('double-drops');
    await e.getByLabel('Name').fill('Double drops');
    await e.getByLabel('Change request title').fill('Double drops for the weekend');
    await e.getByRole('button', { name: 'Request review', exact: true }).click();
    await e.getByRole('heading', { name: 'Double drops for the weekend', level: 1 }).waitFor();
    await e
      .getByRole('region', { name: /What it changes/ })
      .getByText('created')
      .waitFor();
    expect((await t.db.query(`SELECT count(*)::int AS n FROM flags WHERE key = 'double-drops'`)).rows[0].n).toBe(0);

    // Archive, under review, is a request too, titled for the person when they gave no title.
    await e.goto(`${t.config.urls.publicUrl}/console/flags/${flag.id}`);
    await e.getByRole('button', { name: 'Request archive' }).click();
    await e.getByRole('heading', { name: 'Archive loot-rate', level: 1 }).waitFor();
    await e.getByText('Archived: game servers stop receiving it.').waitFor();
    expect((await t.db.query('SELECT archived FROM flags WHERE id = $1', [flag.id])).rows[0].archived).toBe(false);
  });

  /**
   * Two organizations of one person, Staging and Production (an admin there turns review on): the person works in
   * Staging and opens its Promote page, whose target is Production.
   */
  async function promotion(label: string, review: boolean) {
    const staging = await createOrganization(t, `Acme Games Staging ${label}`);
    const production = await createOrganization(t, `Acme Games Production ${label}`);
    const pat = await createUser(t, { name: `Pat Producer ${label}` });
    const maya = await createUser(t, { name: `Maya Admin ${label}` });
    await addMember(t, staging.id, pat.id, 'editor');
    await addMember(t, production.id, pat.id, 'editor');
    await addMember(t, production.id, maya.id, 'admin');
    await createFlag(t, staging.key, { key: 'gems-price', name: 'Gems price', type: 'number', value: 12 });
    await createFlag(t, staging.key, { key: 'motd', name: 'Message of the day', type: 'string', value: 'Double XP weekend!' });
    await createFlag(t, staging.key, { key: 'tutorial', name: 'Tutorial', type: 'boolean', value: true });
    const motd = await createFlag(t, production.key, { key: 'motd', name: 'Message of the day', type: 'string', value: 'Welcome back' });
    await createFlag(t, production.key, { key: 'tutorial', name: 'Tutorial', type: 'boolean', value: true });
    const requireReview = () =>
      signIn(t, maya.email).then((session) =>
        asSession(t, session, production.id).put('/organization/review').send({ required: true, approvals: 1, selfApproval: false }).expect(200),
      );
    if (review) await requireReview();

    const person = await open(pat.email, 'light', '/console/flags');
    const p = person.page;
    // Organizations are listed by name (Production first): the person moves to Staging, then to its Promote page.
    await p.getByLabel('Organization', { exact: true }).selectOption({ label: `Acme Games Staging ${label}` });
    await p.getByRole('link', { name: 'Promote', exact: true }).click();
    await p.getByRole('heading', { name: 'Promote flags', level: 1 }).waitFor();
    expect(await p.getByLabel('Target organization').inputValue()).toBe(production.id);
    await p
      .getByRole('row', { name: /gems-price/ })
      .getByText(`new in Acme Games Production ${label}`)
      .waitFor();
    const productionFlags = async () => (await api(t, production.key).get('/flags/export').expect(200)).body.flags as unknown[];
    return { staging, production, pat, motd, person, p, requireReview, productionFlags };
  }

  it('a promotion into an organization that requires review becomes a change request there, opened from the confirmation', async () => {
    const { production, pat, motd, person, p, productionFlags } = await promotion('review', true);
    const before = { flags: await productionFlags(), motd: await storedFlagVersion(t, motd.id) };

    // The target's setting is read: the action is "Request review", with a title and a description.
    const note = p.getByRole('note').filter({ hasText: 'Acme Games Production review requires review of flag changes' });
    await note.waitFor();
    expect(await note.textContent()).toContain('(1 approval, by another member)');
    expect(await p.getByRole('button', { name: /^Promote \d+ flags?$/ }).count()).toBe(0);
    expect(await p.getByRole('checkbox', { name: 'Promote tutorial' }).isDisabled()).toBe(true); // the same in both
    const title = p.getByLabel('Change request title');
    expect(await title.inputValue()).toBe('Promote flags from Acme Games Staging review'); // prefilled, counting what is chosen
    await p.getByRole('checkbox', { name: 'Promote gems-price' }).check();
    await p.getByRole('checkbox', { name: 'Promote motd' }).check();
    expect(await title.inputValue()).toBe('Promote 2 flags from Acme Games Staging review');
    expect(await title.getAttribute('maxlength')).toBe('200');
    const request = p.getByRole('button', { name: 'Request review', exact: true });
    expect(await request.isDisabled()).toBe(true); // the dry run comes first, as for a direct promotion

    // The dry run's report is shown first, as without review.
    await p.getByRole('button', { name: 'Preview the promotion (dry run)' }).click();
    const report = p.getByRole('region', { name: 'What the promotion would do' });
    await report.getByText('Created: gems-price').waitFor();
    await report.getByText('Updated: motd').waitFor();
    expect(await request.isDisabled()).toBe(false);
    await title.fill('');
    expect(await request.isDisabled()).toBe(true); // a request needs its title
    await title.fill('Weekend event: gems price and message of the day');
    await p.getByLabel('Description (optional)').fill('Tested in staging since Thursday.');
    expect({ violations: await person.accessibilityViolations() }).toEqual({ violations: [] });
    await person.screenshot('promote-review', 'light');

    await request.click();
    const requested = p.getByRole('region', { name: 'Review requested' });
    await requested
      .getByRole('status')
      .filter({ hasText: '“Weekend event: gems price and message of the day” is open in Acme Games Production review, proposing 2 flags.' })
      .waitFor();
    expect(await p.getByRole('region', { name: 'What the promotion would do' }).count()).toBe(0);
    await person.screenshot('promote-review-requested', 'light');
    expect(await p.getByRole('checkbox', { name: 'Promote gems-price' }).isChecked()).toBe(false);
    expect(await title.inputValue()).toBe('Promote flags from Acme Games Staging review'); // ready for the next promotion
    expect({ flags: await productionFlags(), motd: await storedFlagVersion(t, motd.id) }).toEqual(before); // nothing written there

    // The request, as the API keeps it: in Production, by the person, both flags, the dry run's report attached.
    const stored = (await t.db.query('SELECT id FROM change_requests WHERE organization_id = $1', [production.id])).rows;
    expect(stored).toHaveLength(1);
    const id = stored[0].id as string;
    const body = (await api(t, production.key).get(`/change-requests/${id}`).expect(200)).body;
    expect(body).toMatchObject({
      title: 'Weekend event: gems price and message of the day',
      description: 'Tested in staging since Thursday.',
      state: 'open',
      author: { type: 'session', id: pat.id },
      changes: [
        { key: 'gems-price', flagId: null, before: null, after: expect.objectContaining({ value: 12 }) },
        {
          key: 'motd',
          flagId: motd.id,
          before: expect.objectContaining({ value: 'Welcome back' }),
          after: expect.objectContaining({ value: 'Double XP weekend!' }),
        },
      ],
      importReport: { created: ['gems-price'], updated: [expect.objectContaining({ key: 'motd' })], unchanged: [], refused: [] },
    });

    // The confirmation's button switches the console to Production, on the request.
    await requested.getByRole('button', { name: 'Open the request in Acme Games Production review' }).click();
    await p.getByRole('heading', { name: 'Weekend event: gems price and message of the day', level: 1 }).waitFor();
    expect(new URL(p.url()).pathname).toBe(`/console/change-requests/${id}`);
    expect(await p.getByLabel('Organization', { exact: true }).inputValue()).toBe(production.id);
    await p.getByText('open: awaiting review').waitFor();
    await p.getByText('Tested in staging since Thursday.').waitFor();
    const changes = p.getByRole('region', { name: 'What it changes (2 flags)' });
    await changes.getByRole('article', { name: 'Flag gems-price' }).getByText('created').waitFor();
    expect(await changes.getByRole('article', { name: 'Flag motd' }).getByRole('listitem').allTextContents()).toEqual([
      'Value: "Welcome back" → "Double XP weekend!"',
    ]);
    await p.getByText('You made this request: somebody else reviews it.').waitFor();
    // The dry run's report, kept with the request, reads as it did on the Promote page.
    expect(await p.getByRole('region', { name: 'What the promotion would do' }).getByRole('listitem').allTextContents()).toEqual([
      'Created: gems-price',
      'Updated: motd',
      'Unchanged: none',
      'Refused: none',
    ]);
    expect({ flags: await productionFlags(), motd: await storedFlagVersion(t, motd.id) }).toEqual(before);
    expect({ violations: await person.accessibilityViolations() }).toEqual({ violations: [] });
    await person.screenshot('promote-change-request', 'light');
  });

  it('review turned on in the target after the page read it: the refused promotion says so and the page offers the request', async () => {
    const { production, p, requireReview, productionFlags } = await promotion('late', false);
    await p.getByRole('checkbox', { name: 'Promote gems-price' }).check();
    await p.getByRole('button', { name: 'Preview the promotion (dry run)' }).click();
    await p.getByRole('region', { name: 'What the promotion would do' }).getByText('Created: gems-price').waitFor();
    expect(await p.getByLabel('Change request title').count()).toBe(0); // review is off: the page as without it

    await requireReview();
    await p.getByRole('button', { name: 'Promote 1 flag', exact: true }).click();
    await p
      .getByRole('alert')
      .filter({ hasText: 'Nothing was promoted: Acme Games Production late now requires review. Request review instead.' })
      .waitFor();
    expect(await p.getByLabel('Change request title').inputValue()).toBe('Promote 1 flag from Acme Games Staging late');
    await p.getByRole('button', { name: 'Request review', exact: true }).click();
    await p.getByRole('region', { name: 'Review requested' }).getByRole('status').waitFor();
    expect((await productionFlags()).map((flag) => (flag as { key: string }).key)).toEqual(['motd', 'tutorial']);
    const titles = (await t.db.query('SELECT title FROM change_requests WHERE organization_id = $1', [production.id])).rows;
    expect(titles).toEqual([{ title: 'Promote 1 flag from Acme Games Staging late' }]);
  });

  it("its author edits a request's details: told the approvals go, a past applyAt refused with the API's message, the edit in the timeline", async () => {
    const { org, maya, sam } = await team('edit');
    await createFlag(t, org.key, { key: 'boss-hp', name: 'Boss HP', type: 'number', value: 100 });
    await asSession(t, await signIn(t, maya.email), org.id)
      .put('/organization/review')
      .send({ required: true, approvals: 1, selfApproval: false })
      .expect(200);
    const after = { name: 'Boss HP', description: null, type: 'number', value: 120, runtime: 'shared', archived: false };
    const id = (
      await asSession(t, await signIn(t, sam.email), org.id)
        .post('/change-requests')
        .send({ title: 'Boss HP 120', changes: [{ key: 'boss-hp', after }] })
        .expect(201)
    ).body.id as string;
    await asSession(t, await signIn(t, maya.email), org.id)
      .post(`/change-requests/${id}/reviews`)
      .send({ decision: 'approve' })
      .expect(201);
    const stored = async () =>
      (await t.db.query('SELECT title, description, state, apply_at AS "applyAt" FROM change_requests WHERE id = $1', [id])).rows[0] as unknown;
    const approved = { title: 'Boss HP 120', description: null, state: 'approved', applyAt: null };
    expect(await stored()).toEqual(approved);

    // Somebody else (an admin, even) never sees the form.
    const a = (await open(maya.email, 'light', `/console/change-requests/${id}`)).page;
    await a.getByRole('heading', { name: 'Boss HP 120', level: 1 }).waitFor();
    await a.getByText('approved: ready to apply').waitFor();
    expect(await a.getByRole('button', { name: 'Edit details' }).count()).toBe(0);

    // The author asks for the form: it says what saving costs before anything is saved. Not a promotion: no report.
    const editor = await open(sam.email, 'light', `/console/change-requests/${id}`);
    const e = editor.page;
    await e.getByText('approved: ready to apply').waitFor();
    expect(await e.getByRole('region', { name: 'What the promotion would do' }).count()).toBe(0);
    expect(await e.getByRole('region', { name: 'Edit details' }).count()).toBe(0); // hidden until asked for
    await e.getByRole('button', { name: 'Edit details' }).click();
    const form = e.getByRole('region', { name: 'Edit details' });
    expect(await form.getByRole('note').textContent()).toBe(
      'Saving clears its 1 approval: the request is open again and is reviewed again before it can be applied.',
    );
    expect(await form.getByLabel('Title').inputValue()).toBe('Boss HP 120');

    // A time to apply in the past is refused by the API, whose message is shown at the field; nothing is saved.
    await form.getByLabel('Title').fill('Boss HP 120 (not 1200)');
    await form.getByLabel('Apply at (optional)').fill('2020-01-01T10:00');
    await form.getByRole('button', { name: 'Save details' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: /^applyAt must be in the future \(it is .+ now\)$/ })
      .waitFor();
    expect(await stored()).toEqual(approved);
    expect({ violations: await editor.accessibilityViolations() }).toEqual({ violations: [] });
    await editor.screenshot('change-request-edit', 'light');

    // Without it, saved: the new title, open again, the approval gone, the edit in the timeline.
    await form.getByLabel('Apply at (optional)').fill('');
    await form.getByLabel('Description (optional)').fill('1200 was a typo in the design doc.');
    await form.getByRole('button', { name: 'Save details' }).click();
    await e.getByRole('heading', { name: 'Boss HP 120 (not 1200)', level: 1 }).waitFor();
    await e.getByRole('status').filter({ hasText: 'Details saved: the request is reviewed again.' }).waitFor();
    await e.getByText('open: awaiting review').waitFor();
    await e.getByText('0 of 1 approval', { exact: false }).waitFor();
    expect(await e.getByRole('region', { name: 'Edit details' }).count()).toBe(0);
    await e.getByRole('region', { name: 'Reviews' }).getByText('No reviews of this version yet.').waitFor();
    expect(await e.getByRole('region', { name: 'Timeline' }).getByRole('listitem').allTextContents()).toEqual([
      expect.stringContaining(`${sam.name} opened the request`),
      expect.stringContaining(`${maya.name} approved`),
      expect.stringContaining(`${sam.name} edited the request (its reviews were cleared)`),
    ]);
    expect(await stored()).toEqual({
      title: 'Boss HP 120 (not 1200)',
      description: '1200 was a typo in the design doc.',
      state: 'open',
      applyAt: null,
    });
    // The admin's page hears of the edit: she may review the new version.
    await a.getByRole('heading', { name: 'Boss HP 120 (not 1200)', level: 1 }).waitFor();
    await a.getByRole('button', { name: 'Approve' }).waitFor();
  });

  it('a person turns their change request mail off and on from the Change requests page', async () => {
    const { sam } = await team('mail');
    const e = (await open(sam.email, 'light', '/console/change-requests')).page;
    const box = e.getByLabel('Mail me about change requests');
    await box.waitFor();
    expect(await box.isChecked()).toBe(true);
    const stored = async () => (await t.db.query('SELECT review_mail FROM users WHERE id = $1', [sam.id])).rows[0].review_mail as boolean;
    await box.uncheck();
    await e.locator('input[type=checkbox]:not([disabled])').waitFor();
    expect(await stored()).toBe(false);
    await e.reload();
    await e.getByLabel('Mail me about change requests').waitFor();
    expect(await e.getByLabel('Mail me about change requests').isChecked()).toBe(false);
    await e.getByLabel('Mail me about change requests').check();
    await e.locator('input[type=checkbox]:not([disabled])').waitFor();
    expect(await stored()).toBe(true);
  });
});
