import {
  AnyWebhookEventType,
  ChangeRequestEventData,
  WebhookEvent,
  WebhookEventDataMap,
  WebhookEventType,
  WebhookFlagChange,
  WebhookRenderContext,
} from '../webhook-event';
import { DiscordBody, DISCORD_LIMITS, SlackBody, SLACK_LIMITS } from './chat-bodies';
import { MAX_RENDERED_BODY_BYTES, renderWebhook } from './webhook-render';

const AT = new Date('2026-11-29T12:00:00.000Z');
const ORG_ID = '4f1c2a7e-0000-4000-8000-000000000001';
const CONTEXT: WebhookRenderContext = { organizationName: 'Acme Games', consoleUrl: 'https://flags.example/console' };

function eventOf<T extends AnyWebhookEventType>(type: T, data: WebhookEventDataMap[T]): WebhookEvent {
  return { id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', type, organizationId: ORG_ID, data, createdAt: AT } as WebhookEvent;
}

function snapshot(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Double XP', description: null, type: 'number', value: 2, runtime: 'shared', archived: false, ...overrides };
}

function change(key: string, before: unknown, after: unknown, extra: Partial<WebhookFlagChange> = {}): WebhookFlagChange {
  return { flagId: `flag-${key}`, key, action: 'flag.update', before, after, context: null, ...extra };
}

function flagChanged(
  changes: WebhookFlagChange[],
  actorName: string | null = 'Maya',
  actorType: 'session' | 'apiKey' | 'system' = 'session',
): WebhookEvent {
  return eventOf('flag.changed', {
    organizationId: ORG_ID,
    changes,
    actor: { type: actorType, id: actorType === 'system' ? null : 'actor-1', name: actorName },
  });
}

function flagLink(key: string): string {
  return `https://flags.example/console/flags/flag-${key}?org=${ORG_ID}`;
}

/** Everything a Slack client shows of a body, one piece a line. */
function slackText(body: SlackBody): string {
  const pieces = [body.text];
  for (const block of body.blocks) {
    const text = block.text as { text: string } | undefined;
    if (text) pieces.push(text.text);
    for (const field of (block.fields as { text: string }[] | undefined) ?? []) pieces.push(field.text);
    for (const element of (block.elements as { text: string }[] | undefined) ?? []) pieces.push(element.text);
  }
  return pieces.join('\n');
}

/** Everything a Discord client shows of a body, one piece a line. */
function discordText(body: DiscordBody): string {
  const pieces = [body.content];
  for (const embed of body.embeds) {
    pieces.push(embed.title, embed.url ?? '', embed.description ?? '', embed.footer.text);
    for (const field of embed.fields) pieces.push(field.name, field.value);
  }
  return pieces.join('\n');
}

function slack(event: WebhookEvent, context = CONTEXT): SlackBody {
  return JSON.parse(renderWebhook('slack', event, context)) as SlackBody;
}

function discord(event: WebhookEvent, context = CONTEXT): DiscordBody {
  return JSON.parse(renderWebhook('discord', event, context)) as DiscordBody;
}

/** What both chats show, Slack's and Discord's, for assertions that hold in either markup. */
function bothTexts(event: WebhookEvent, context = CONTEXT): string[] {
  return [slackText(slack(event, context)), discordText(discord(event, context))];
}

function expectSlackWithinLimits(body: SlackBody): void {
  expect(body.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
  expect(body.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  for (const block of body.blocks) {
    const text = block.text as { text: string } | undefined;
    if (text) expect(text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    const fields = (block.fields as { text: string }[] | undefined) ?? [];
    expect(fields.length).toBeLessThanOrEqual(SLACK_LIMITS.fields);
    for (const field of fields) expect(field.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
    for (const element of (block.elements as { text: string }[] | undefined) ?? [])
      expect(element.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
  }
}

function expectDiscordWithinLimits(body: DiscordBody): void {
  expect(body.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
  expect(body.embeds.length).toBeLessThanOrEqual(DISCORD_LIMITS.embeds);
  let total = 0;
  for (const embed of body.embeds) {
    expect(embed.title.length).toBeLessThanOrEqual(DISCORD_LIMITS.title);
    expect((embed.description ?? '').length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    expect(embed.fields.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
    for (const field of embed.fields) {
      expect(field.name.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldName);
      expect(field.value.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldValue);
    }
    total += embed.title.length + (embed.description ?? '').length + embed.footer.text.length;
    total += embed.fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0);
  }
  expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
  expect(body.allowed_mentions).toEqual({ parse: [] });
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

describe('renderWebhook: standard', () => {
  it('is exactly {type, timestamp, data}, compact, with the time the event happened', () => {
    const event = flagChanged([change('double-xp', snapshot(), snapshot({ value: 20 }), { action: 'flag.value.set' })]);
    const body = renderWebhook('standard', event, CONTEXT);
    expect(body).toBe(JSON.stringify({ type: 'flag.changed', timestamp: '2026-11-29T12:00:00.000Z', data: event.data }));
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['type', 'timestamp', 'data']);
  });

  it('renders every event type whole when it is small, the test event included', () => {
    const events = [
      eventOf('storage.changed', { ids: ['a', 'b'], change: 'purged' }),
      eventOf('webhook.test', { organizationId: ORG_ID, endpointId: 'ep-1', message: 'hello' }),
    ];
    for (const event of events) {
      expect(JSON.parse(renderWebhook('standard', event, CONTEXT))).toEqual({ type: event.type, timestamp: AT.toISOString(), data: event.data });
    }
  });

  it('drops before and after and says so when the states would pass 256 KB, keeping every change', () => {
    const big = { levels: Array.from({ length: 50 }, (_, i) => ({ level: i, xp: 'x'.repeat(20) })) };
    const changes = Array.from({ length: 500 }, (_, i) =>
      change(`flag-${i}`, snapshot({ type: 'json', value: big }), snapshot({ type: 'json', value: { ...big, v: i } }), { context: { import: true } }),
    );
    const event = flagChanged(changes);
    expect(bytes(JSON.stringify(event.data))).toBeGreaterThan(MAX_RENDERED_BODY_BYTES);

    const body = renderWebhook('standard', event, CONTEXT);
    expect(bytes(body)).toBeLessThanOrEqual(MAX_RENDERED_BODY_BYTES);
    const data = (JSON.parse(body) as { data: Record<string, unknown> }).data;
    expect(data.truncated).toBe(true);
    expect(data).not.toHaveProperty('omittedChanges');
    expect(data.actor).toEqual({ type: 'session', id: 'actor-1', name: 'Maya' });
    expect(data.changes).toHaveLength(500);
    expect((data.changes as object[])[7]).toEqual({ flagId: 'flag-flag-7', key: 'flag-7', action: 'flag.update', context: { import: true } });
  });

  it('keeps the first changes that fit and counts the others when even the changes alone pass 256 KB (an import of 10,000 flags)', () => {
    // Multi-byte text in every change: the cap is in bytes, not characters.
    const why = { changeRequestId: 'cr-1', override: { reason: 'Sommerfest 🎮 für alle' } };
    const changes = Array.from({ length: 10_000 }, (_, i) =>
      change(`flag-${i}`, snapshot({ value: 'é'.repeat(500) }), snapshot({ value: i }), { context: why }),
    );
    const body = renderWebhook('standard', flagChanged(changes), CONTEXT);

    expect(bytes(body)).toBeLessThanOrEqual(MAX_RENDERED_BODY_BYTES);
    // As many as fit: the room left is less than one more change.
    expect(bytes(body)).toBeGreaterThan(MAX_RENDERED_BODY_BYTES - 200);
    const data = (JSON.parse(body) as { data: { changes: { key: string }[]; truncated: boolean; omittedChanges: number } }).data;
    expect(data.truncated).toBe(true);
    expect(data.changes.length).toBeGreaterThan(1000);
    expect(data.changes.length + data.omittedChanges).toBe(10_000);
    expect(data.changes.map((c) => c.key)).toEqual(changes.slice(0, data.changes.length).map((c) => c.key));
    expect(data.changes[0]).not.toHaveProperty('before');
  });

  it('keeps the first storage ids that fit, and a change request’s first flag keys', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `3b0f5c1e-8d2a-4e6b-9c7d-${String(i).padStart(12, '0')}`);
    const storage = JSON.parse(renderWebhook('standard', eventOf('storage.changed', { ids, change: 'purged' }), CONTEXT)) as {
      data: { ids: string[]; change: string; truncated: boolean; omittedIds: number };
    };
    expect(bytes(JSON.stringify(storage))).toBeLessThanOrEqual(MAX_RENDERED_BODY_BYTES);
    expect(storage.data.change).toBe('purged');
    expect(storage.data.truncated).toBe(true);
    expect(storage.data.ids).toEqual(ids.slice(0, storage.data.ids.length));
    expect(storage.data.ids.length + storage.data.omittedIds).toBe(20_000);

    const flagKeys = Array.from({ length: 10_000 }, (_, i) => `${'k'.repeat(58)}-${String(i).padStart(5, '0')}`);
    const body = renderWebhook('standard', changeRequestEvent('change-request.opened', { flagKeys }), CONTEXT);
    expect(bytes(body)).toBeLessThanOrEqual(MAX_RENDERED_BODY_BYTES);
    const data = (JSON.parse(body) as { data: { title: string; flagKeys: string[]; truncated: boolean; omittedFlagKeys: number } }).data;
    expect(data.title).toBe('Double XP');
    expect(data.truncated).toBe(true);
    expect(data.flagKeys.length + data.omittedFlagKeys).toBe(10_000);
  });
});

function changeRequestEvent(type: WebhookEventType, overrides: Partial<ChangeRequestEventData> = {}): WebhookEvent {
  return eventOf(type, {
    id: 'cr-1',
    title: 'Double XP',
    state: 'open',
    author: { id: 'user-maya', name: 'Maya' },
    flagKeys: ['double-xp', 'xp-cap'],
    url: 'https://flags.example/console/change-requests/cr-1',
    actor: { type: 'session', id: 'user-maya', name: 'Maya' },
    ...overrides,
  });
}

describe('renderWebhook: flag.changed in chat', () => {
  it('says who changed which flag in which organization, from what to what, with the flag’s link', () => {
    const event = flagChanged([change('double-xp', snapshot(), snapshot({ value: 20 }), { action: 'flag.value.set' })]);
    const slackBody = slack(event);
    expect(slackBody.text).toBe(`*Maya* updated <${flagLink('double-xp')}|double-xp> in *Acme Games*: value \`2\` → \`20\``);
    expect(slackText(slackBody)).toContain(`<${flagLink('double-xp')}|Open in the console>`);

    const discordBody = discord(event);
    expect(discordBody.content).toBe(`**Maya** updated [double-xp](${flagLink('double-xp')}) in **Acme Games**: value \`2\` → \`20\``);
    expect(discordBody.embeds[0]).toMatchObject({
      title: 'double-xp',
      url: flagLink('double-xp'),
      timestamp: '2026-11-29T12:00:00.000Z',
      footer: { text: 'Acme Games · Flagstore' },
    });
  });

  it('says a boolean flag was turned on or off', () => {
    const event = flagChanged([change('pvp', snapshot({ type: 'boolean', value: false }), snapshot({ type: 'boolean', value: true }))]);
    expect(slack(event).text).toContain('in *Acme Games*: turned *on*');
    expect(discord(event).content).toContain('in **Acme Games**: turned **on**');
  });

  it('gives a created flag’s type and value, and a deleted flag without a link', () => {
    const created = flagChanged([change('xp-cap', null, snapshot({ value: 500, runtime: 'server', rules: [{}, {}] }), { action: 'flag.create' })]);
    expect(slack(created).text).toBe(
      `*Maya* created <${flagLink('xp-cap')}|xp-cap> in *Acme Games* as \`number\`, value \`500\`, 2 rules, server only`,
    );

    const deleted = flagChanged([change('old-event', snapshot(), null, { flagId: null, action: 'flag.delete' })]);
    expect(slack(deleted).text).toBe('*Maya* deleted `old-event` in *Acme Games*');
    expect(discord(deleted).content).toBe('**Maya** deleted `old-event` in **Acme Games**');
    for (const text of bothTexts(deleted)) expect(text).not.toContain('/flags/');
  });

  it('says archived and unarchived, with anything else the edit changed', () => {
    const archived = flagChanged([change('halloween', snapshot(), snapshot({ archived: true, description: 'over' }), { action: 'flag.archive' })]);
    expect(slack(archived).text).toBe(`*Maya* archived <${flagLink('halloween')}|halloween> in *Acme Games*: description changed`);
    const unarchived = flagChanged([change('halloween', snapshot({ archived: true }), snapshot(), { action: 'flag.unarchive' })]);
    expect(slack(unarchived).text).toBe(`*Maya* unarchived <${flagLink('halloween')}|halloween> in *Acme Games*`);
  });

  it('lists each flag of a write on its own line: rules by count, runtime, renames, descriptions, types', () => {
    const event = flagChanged([
      change('double-xp', snapshot({ rules: [{}] }), snapshot({ rules: [{}, {}, {}] })),
      change('xp-cap', snapshot({ runtime: 'shared' }), snapshot({ runtime: 'server' })),
      change('names', snapshot({ name: 'Old' }), snapshot({ name: 'New', description: 'Now with text' })),
      change('shape', snapshot(), snapshot({ type: 'string', value: 'two' })),
      change('same-count', snapshot({ rules: [{ a: 1 }] }), snapshot({ rules: [{ a: 2 }] })),
    ]);
    const text = slackText(slack(event));
    expect(slack(event).text).toBe('*Maya* changed *5 flags* in *Acme Games*');
    expect(text).toContain(`• <${flagLink('double-xp')}|double-xp>: rules changed (1 → 3)`);
    expect(text).toContain(`• <${flagLink('xp-cap')}|xp-cap>: runtime \`shared\` → \`server\``);
    expect(text).toContain(`• <${flagLink('names')}|names>: renamed “Old” → “New”, description changed`);
    expect(text).toContain(`• <${flagLink('shape')}|shape>: type \`number\` → \`string\`, value \`2\` → \`"two"\``);
    expect(text).toContain(`• <${flagLink('same-count')}|same-count>: rules changed (1)`);
    expect(text).not.toContain('more');

    const embed = discord(event).embeds[0];
    expect(embed.title).toBe('5 flags changed');
    expect(embed.description?.split('\n')).toHaveLength(5);
    expect(embed.description).toContain(`• [double-xp](${flagLink('double-xp')}): rules changed (1 → 3)`);
  });

  it('says why: an import, a restore, a schedule, a change request applied over review with its reason', () => {
    const imported = flagChanged([
      change('a', null, snapshot(), { context: { import: true } }),
      change('b', snapshot(), snapshot({ value: 3 }), { context: { import: true } }),
    ]);
    expect(slack(imported).text).toBe('*Maya* imported *2 flags* into *Acme Games*');

    const restored = flagChanged([change('double-xp', snapshot({ value: 20 }), snapshot(), { context: { restoredFrom: 'entry-9' } })]);
    for (const text of bothTexts(restored)) {
      expect(text).toMatch(/restored .*double-xp.* in .*Acme Games.* to an earlier version: value `20` → `2`/);
      expect(text).toContain('`entry-9`');
    }

    const scheduled = flagChanged([change('double-xp', snapshot(), snapshot({ value: 20 }), { context: { scheduleId: 'sched-1' } })], null, 'system');
    expect(slack(scheduled).text).toMatch(/^A scheduled change updated <.*\|double-xp> in \*Acme Games\*: value `2` → `20`$/);
    expect(slackText(slack(scheduled))).toContain('*Schedule*\n`sched-1`');

    const why = { changeRequestId: 'cr-7', override: { reason: 'Server fire at 3 a.m.' } };
    const applied = flagChanged([
      change('a', snapshot(), snapshot({ value: 3 }), { context: why }),
      change('b', snapshot(), snapshot({ value: 4 }), { context: why }),
    ]);
    const requestLink = `https://flags.example/console/change-requests/cr-7?org=${ORG_ID}`;
    expect(slack(applied).text).toBe(`*Maya* applied <${requestLink}|a change request> to *2 flags* in *Acme Games*, overriding review`);
    expect(slackText(slack(applied))).toContain('*Reason*\nServer fire at 3 a.m.');
    expect(discord(applied).embeds[0].fields).toContainEqual({ name: 'Reason', value: 'Server fire at 3 a.m.', inline: true });
  });

  it('names an API key as such, and someone without a name as someone', () => {
    const byKey = flagChanged([change('a', snapshot(), snapshot({ value: 3 }))], 'CI deploy', 'apiKey');
    expect(slack(byKey).text).toMatch(/^An API key ‘CI deploy’ updated /);
    const nameless = flagChanged([change('a', snapshot(), snapshot({ value: 3 }))], null);
    expect(discord(nameless).content).toMatch(/^Someone updated /);
  });
});

describe('renderWebhook: other events in chat', () => {
  it('change-request.opened: who opened which request, its flags, its link', () => {
    const url = 'https://flags.example/console/change-requests/cr-1';
    expect(slack(changeRequestEvent('change-request.opened')).text).toBe(
      `*Maya* opened change request “<${url}|Double XP>” in *Acme Games* (2 flags: \`double-xp\`, \`xp-cap\`)`,
    );
    const body = discord(changeRequestEvent('change-request.opened'));
    expect(body.content).toBe(`**Maya** opened change request “[Double XP](${url})” in **Acme Games** (2 flags: \`double-xp\`, \`xp-cap\`)`);
    expect(body.embeds[0]).toMatchObject({ title: 'Double XP', url });
  });

  it('change-request.approved and declined: by whom, with the comment; an approval short of the number says so', () => {
    const lee = { type: 'session' as const, id: 'user-lee', name: 'Lee' };
    const approved = changeRequestEvent('change-request.approved', { actor: lee, state: 'approved', comment: 'Looks good' });
    expect(slack(approved).text).toMatch(/^\*Lee\* approved change request “<.*\|Double XP>” in \*Acme Games\*$/);
    expect(slackText(slack(approved))).toContain('*Comment*\nLooks good');
    expect(discord(approved).embeds[0].fields).toEqual([
      { name: 'Comment', value: 'Looks good', inline: true },
      { name: 'Author', value: '**Maya**', inline: true },
      { name: 'Flags', value: '2 flags: `double-xp`, `xp-cap`', inline: true },
    ]);
    expect(slack(changeRequestEvent('change-request.approved', { actor: lee, state: 'open' })).text).toContain('; it awaits more approvals');

    const declined = changeRequestEvent('change-request.declined', { actor: lee, state: 'declined', comment: 'Not before the event' });
    for (const text of bothTexts(declined)) {
      expect(text).toMatch(/Lee.* declined change request “.*Double XP.*” in /);
      expect(text).toContain('Not before the event');
    }
  });

  it('change-request.applied and failed: an override says so and why; a failure gives its reason', () => {
    const admin = { type: 'session' as const, id: 'user-ada', name: 'Ada' };
    const plain = changeRequestEvent('change-request.applied', { actor: admin, state: 'applied' });
    expect(slack(plain).text).toMatch(/^\*Ada\* applied change request “<.*\|Double XP>” in \*Acme Games\*$/);
    const override = changeRequestEvent('change-request.applied', { actor: admin, state: 'applied', comment: 'Hotfix' });
    expect(slack(override).text).toMatch(/, overriding review$/);
    expect(slackText(slack(override))).toContain('*Reason*\nHotfix');

    const failed = changeRequestEvent('change-request.failed', {
      actor: { type: 'system', id: null, name: null },
      state: 'failed',
      comment: 'xp-cap changed since',
    });
    expect(slack(failed).text).toMatch(/^Change request “<.*\|Double XP>” in \*Acme Games\* could not be applied and failed$/);
    expect(discord(failed).embeds[0].fields).toContainEqual({ name: 'Reason', value: 'xp-cap changed since', inline: true });
  });

  it('review-setting.changed: turned on with its settings, off, or changed from what', () => {
    const entry = (before: object, after: object): WebhookEvent =>
      eventOf('review-setting.changed', {
        id: 'h-1',
        organizationId: ORG_ID,
        user: { id: 'user-maya', name: 'Maya' },
        at: AT.toISOString(),
        before: { required: false, approvals: 1, selfApproval: false, ...before },
        after: { required: false, approvals: 1, selfApproval: false, ...after },
      });
    expect(slack(entry({}, { required: true, approvals: 2 })).text).toBe('*Maya* turned review on in *Acme Games*: 2 approvals, self-approval off');
    expect(discord(entry({ required: true }, {})).content).toBe('**Maya** turned review off in **Acme Games**');
    expect(slack(entry({ required: true, approvals: 1 }, { required: true, approvals: 3, selfApproval: true })).text).toBe(
      '*Maya* changed review in *Acme Games*: 3 approvals (was 1), self-approval on (was off)',
    );
    expect(slackText(slack(entry({}, { required: true })))).toContain(
      `<https://flags.example/console/organization?org=${ORG_ID}|Open in the console>`,
    );
  });

  it('storage.changed: how many files, what happened, which', () => {
    const event = eventOf('storage.changed', { ids: ['id-1', 'id-2', 'id-3'], change: 'purged' });
    expect(slack(event).text).toBe('*3 files* purged in *Acme Games*');
    expect(discord(event).embeds[0]).toMatchObject({ title: '3 files purged', description: '• `id-1`\n• `id-2`\n• `id-3`' });
    expect(slack(eventOf('storage.changed', { ids: ['id-1'], change: 'uploaded' })).text).toBe('*1 file* uploaded in *Acme Games*');
  });

  it('webhook.test: says it is a test, for which organization', () => {
    const event = eventOf('webhook.test', { organizationId: ORG_ID, endpointId: 'ep-1', message: 'Sent from the console' });
    expect(slack(event).text).toBe('This is a test event from Flagstore for *Acme Games*');
    expect(discord(event).content).toBe('This is a test event from Flagstore for **Acme Games**');
    expect(discord(event).embeds[0].description).toBe('Sent from the console');
  });
});

describe('renderWebhook: hostile text', () => {
  const hostile = '<!channel> *bold* @everyone';
  const context = { ...CONTEXT, organizationName: hostile };
  const events = [
    flagChanged([change('a', snapshot({ name: hostile }), snapshot({ name: 'x' }))], hostile),
    flagChanged(
      [change('a', snapshot(), snapshot({ value: 3 }), { context: { changeRequestId: 'cr-1', override: { reason: hostile } } })],
      hostile,
      'apiKey',
    ),
    changeRequestEvent('change-request.declined', {
      title: hostile,
      comment: hostile,
      author: { id: null, name: hostile },
      actor: { type: 'session', id: 'u', name: hostile },
    }),
    changeRequestEvent('change-request.opened', { title: `${hostile}\n# heading\n> quote` }),
  ];

  it('cannot mention or link in Slack: &, < and > are escaped, our own links stay links', () => {
    for (const event of events) {
      const text = slackText(slack(event, context));
      expect(text).not.toContain('<!channel>');
      expect(text).toContain('&lt;!channel&gt;');
      expect(text).not.toMatch(/@everyone/);
      expect(text).toContain('<https://flags.example/console/');
    }
  });

  it('cannot format or mention in Discord, and the body allows no mentions at all', () => {
    for (const event of events) {
      const body = discord(event, context);
      // The footer shows no markdown: only its mentions are broken.
      expect(body.embeds[0].footer.text).toBe('<!channel> *bold* @\u200beveryone · Flagstore');
      const text = discordText({ ...body, embeds: body.embeds.map((embed) => ({ ...embed, footer: { text: '' } })) });
      expect(text).not.toMatch(/@everyone/);
      expect(text).not.toMatch(/(^|[^\\])<!channel/);
      expect(text).not.toMatch(/(^|[^\\])\*bold/);
      expect(text).toContain('\\<!channel\\> \\*bold\\* @\u200beveryone');
      expect(body.content).not.toContain('\n');
      expect(body.allowed_mentions).toEqual({ parse: [] });
    }
  });
});

describe('renderWebhook: within the limits with 10,000 changes', () => {
  // Every piece at its longest and full of characters that escaping lengthens.
  const context = { ...CONTEXT, organizationName: '*_'.repeat(60) };
  const key = (i: number): string => `${'_'.repeat(58)}${String(i).padStart(6, '0')}`;
  const hugeValue = { text: '*'.repeat(10_000) };
  const changes = Array.from({ length: 10_000 }, (_, i) =>
    change(
      key(i),
      snapshot({ name: '*'.repeat(100), value: hugeValue, type: 'json' }),
      snapshot({ name: '_'.repeat(100), value: { ...hugeValue, i }, type: 'json', rules: [{}] }),
      {
        context: { changeRequestId: 'cr-1', override: { reason: '|'.repeat(500) } },
      },
    ),
  );
  const events = [
    flagChanged(changes, '*'.repeat(100)),
    changeRequestEvent('change-request.declined', { title: '['.repeat(200), comment: '`'.repeat(2000), flagKeys: changes.map((c) => c.key) }),
    eventOf('storage.changed', { ids: Array.from({ length: 10_000 }, (_, i) => `id-${i}`), change: 'deleted' }),
  ];

  it('every format stays within 256 KB', () => {
    for (const event of events) {
      for (const format of ['standard', 'slack', 'discord'] as const) {
        expect(bytes(renderWebhook(format, event, context))).toBeLessThanOrEqual(MAX_RENDERED_BODY_BYTES);
      }
    }
  });

  it('Slack and Discord bodies keep to their platforms’ limits, and count what they could not list', () => {
    for (const event of events) {
      expectSlackWithinLimits(slack(event, context));
      expectDiscordWithinLimits(discord(event, context));
    }
    // Slack spreads the list over sections and shows all ten; Discord's one description holds fewer of the longest lines.
    const slackList = slackText(slack(events[0], context));
    expect(slackList.match(/^• /gm)).toHaveLength(10);
    expect(slackList).toContain('and 9,990 more');
    const discordList = discordText(discord(events[0], context));
    const listed = discordList.match(/^• /gm)?.length ?? 0;
    expect(listed).toBeGreaterThanOrEqual(3);
    expect(discordList).toContain(`and ${(10_000 - listed).toLocaleString('en-US')} more`);
    expect(discord(events[1], context).embeds[0].fields).toContainEqual(
      expect.objectContaining({ name: 'Flags', value: expect.stringMatching(/^10,000 flags: .* and 9,990 more$/) }),
    );
  });

  it('list ten flags or files, then "and N more", when the lines are of ordinary length', () => {
    const ordinary = flagChanged(Array.from({ length: 10_000 }, (_, i) => change(`level-${i}-xp`, snapshot(), snapshot({ value: i }))));
    const storage = events[2];
    for (const event of [ordinary, storage]) {
      for (const text of [slackText(slack(event)), discordText(discord(event))]) {
        expect(text.match(/^• /gm)).toHaveLength(10);
        expect(text).toContain('and 9,990 more');
      }
    }
    expect(slack(ordinary).blocks).toHaveLength(3);
  });
});
