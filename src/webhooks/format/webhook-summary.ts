import {
  AnyWebhookEventType,
  ChangeRequestEventData,
  FlagChangedData,
  ReviewSettingChangedData,
  StorageChangedData,
  WebhookActor,
  WebhookEvent,
  WebhookEventDataMap,
  WebhookFlagChange,
  WebhookRenderContext,
  WebhookTestData,
} from '../webhook-event';
import { ChatMarkup } from './chat-markup';

/**
 * What a person reads of an event in chat (issue 35, "Readable in chat"): who did what to which flags, in which
 * organization, from what to what, with the console link. Written once in a chat's markup; the chat bodies
 * (chat-bodies.ts) place it and hold it to the platform's limits.
 */
export interface WebhookSummary {
  /** One line: who did what, where. Markup. */
  headline: string;
  /** What the event is about, raw text (a flag key, a request's title): a Discord embed's title. */
  title: string;
  /** The console page of what the event is about, when there is one. */
  url: string | null;
  /** One line per item (flag, file), the first LISTED_ITEMS of them. Markup. */
  lines: string[];
  /** Items not in `lines`. */
  more: number;
  /** Short labelled facts: a comment, a reason, the author. Markup. */
  notes: { label: string; text: string }[];
}

/** Chat messages list this many flags or files and then say "and N more". */
export const LISTED_ITEMS = 10;

// How much of a user's text a message shows: enough to recognise it, little enough that ten lines fit every limit.
const NAME_CHARS = 100;
const TITLE_CHARS = 150;
const COMMENT_CHARS = 400;
const VALUE_CHARS = 60;
const KEY_CHARS = 64;

export function summarise(event: WebhookEvent, context: WebhookRenderContext, m: ChatMarkup): WebhookSummary {
  const org = m.bold(m.text(context.organizationName, NAME_CHARS));
  switch (event.type) {
    case 'flag.changed':
      return flagChanged(dataOf(event, 'flag.changed'), context, org, m);
    case 'change-request.opened':
    case 'change-request.approved':
    case 'change-request.declined':
    case 'change-request.applied':
    case 'change-request.failed':
      return changeRequest(event.type, event.data as ChangeRequestEventData, org, m);
    case 'review-setting.changed':
      return reviewSetting(dataOf(event, 'review-setting.changed'), context, event.organizationId, org, m);
    case 'storage.changed':
      return storage(dataOf(event, 'storage.changed'), context, event.organizationId, org, m);
    case 'webhook.test':
      return test(dataOf(event, 'webhook.test'), context, org, m);
  }
}

function dataOf<T extends AnyWebhookEventType>(event: WebhookEvent, type: T): WebhookEventDataMap[T] {
  if (event.type !== type) throw new Error(`expected a ${type} event, got ${event.type}`);
  return event.data as WebhookEventDataMap[T];
}

export function flagUrl(context: WebhookRenderContext, organizationId: string, flagId: string): string {
  return `${context.consoleUrl}/flags/${encodeURIComponent(flagId)}?org=${encodeURIComponent(organizationId)}`;
}

function consolePage(context: WebhookRenderContext, page: string, organizationId: string): string {
  return `${context.consoleUrl}/${page}?org=${encodeURIComponent(organizationId)}`;
}

// ---- flag.changed ----------------------------------------------------------------------------------------------

/** A flag snapshot (flags/flag.model.ts, FlagSnapshot) as the audit entry holds it: JSON, read defensively. */
interface SnapshotView {
  name?: unknown;
  description?: unknown;
  type?: unknown;
  value?: unknown;
  runtime?: unknown;
  archived?: unknown;
  rules?: unknown;
}

type ChangeKind = 'created' | 'deleted' | 'archived' | 'unarchived' | 'updated';

function flagChanged(data: FlagChangedData, context: WebhookRenderContext, org: string, m: ChatMarkup): WebhookSummary {
  const { changes } = data;
  const who = actorPhrase(data.actor, 'A scheduled change', m);
  // One write, one reason: every entry of an import, an apply or a restore carries the same context.
  const why = changes.find((change) => change.context)?.context ?? {};
  const single = changes.length === 1 ? changes[0] : null;
  const subject = single ? flagRef(single, data.organizationId, context, m) : m.bold(`${count(changes.length)} flags`);
  const changeRequestId = typeof why.changeRequestId === 'string' ? why.changeRequestId : null;
  const reason = overrideReason(why);

  let did: string;
  let ordinary = false;
  if (why.import === true) did = `imported ${subject} into ${org}`;
  else if (changeRequestId) {
    const request = m.link(
      consolePage(context, `change-requests/${encodeURIComponent(changeRequestId)}`, data.organizationId),
      'a change request',
      50,
    );
    did = `applied ${request} to ${subject} in ${org}${reason !== null ? ', overriding review' : ''}`;
  } else if (typeof why.restoredFrom === 'string') did = `restored ${subject} in ${org} to an earlier version`;
  else if (single) {
    did = `${kindOf(single)} ${subject} in ${org}`;
    ordinary = true;
  } else did = `changed ${subject} in ${org}`;

  const notes: WebhookSummary['notes'] = [];
  if (reason) notes.push({ label: 'Reason', text: m.text(reason, COMMENT_CHARS) });
  if (typeof why.scheduleId === 'string') notes.push({ label: 'Schedule', text: m.code(why.scheduleId, KEY_CHARS) });
  if (typeof why.restoredFrom === 'string') notes.push({ label: 'Restored from audit entry', text: m.code(why.restoredFrom, KEY_CHARS) });

  if (single) {
    // One flag: the headline says it all ("Maya updated double-xp in Acme: value 2 → 20").
    const kind = kindOf(single);
    const parts = detailsOf(single, m);
    const what = ordinary
      ? kind === 'created'
        ? ` as ${parts.join(', ')}`
        : parts.length > 0
          ? `: ${parts.join(', ')}`
          : ''
      : `: ${described(kind, parts)}`;
    return {
      headline: `${who} ${did}${what}`,
      title: single.key,
      url: single.flagId && kind !== 'deleted' ? flagUrl(context, data.organizationId, single.flagId) : null,
      lines: [],
      more: 0,
      notes,
    };
  }
  const listed = changes.slice(0, LISTED_ITEMS);
  return {
    headline: `${who} ${did}`,
    title: `${count(changes.length)} flags changed`,
    url: null,
    lines: listed.map((change) => `• ${flagRef(change, data.organizationId, context, m)}: ${described(kindOf(change), detailsOf(change, m))}`),
    more: changes.length - listed.length,
    notes,
  };
}

/** A deleted flag has no page to link to. */
function flagRef(change: WebhookFlagChange, organizationId: string, context: WebhookRenderContext, m: ChatMarkup): string {
  return change.flagId && kindOf(change) !== 'deleted'
    ? m.link(flagUrl(context, organizationId, change.flagId), change.key, KEY_CHARS)
    : m.code(change.key, KEY_CHARS);
}

function kindOf(change: WebhookFlagChange): ChangeKind {
  const before = snapshot(change.before);
  const after = snapshot(change.after);
  if (!before && after) return 'created';
  if (before && !after) return 'deleted';
  if (before && after) {
    if (before.archived !== true && after.archived === true) return 'archived';
    if (before.archived === true && after.archived !== true) return 'unarchived';
    return 'updated';
  }
  // No snapshots to compare (not expected): the audit label says it (flag.create, flag.archive, ...).
  if (/create/.test(change.action)) return 'created';
  if (/delete/.test(change.action)) return 'deleted';
  if (/unarchive/.test(change.action)) return 'unarchived';
  if (/archive/.test(change.action)) return 'archived';
  return 'updated';
}

/** "created as `number`, value `2`", "archived, value `2` → `20`", "deleted". */
function described(kind: ChangeKind, details: string[]): string {
  if (kind === 'created') return `created as ${details.join(', ')}`;
  if (kind === 'updated') return details.length > 0 ? details.join(', ') : 'updated';
  return [kind, ...details].join(', ');
}

/**
 * What a change did beyond its kind, compactly: a new flag's type and value, an edit's fields from what to what
 * (FlagSnapshot: type, value, rules by count, runtime, name, description).
 */
function detailsOf(change: WebhookFlagChange, m: ChatMarkup): string[] {
  const before = snapshot(change.before);
  const after = snapshot(change.after);
  if (!before && after) return createdDetails(after, m);
  if (!before || !after) return [];

  const parts: string[] = [];
  if (before.type !== after.type) parts.push(`type ${m.code(String(before.type), 20)} → ${m.code(String(after.type), 20)}`);
  if (!sameJson(before.value, after.value)) {
    const toggled = after.type === 'boolean' && before.type === 'boolean' && typeof after.value === 'boolean';
    parts.push(toggled ? `turned ${m.bold(after.value ? 'on' : 'off')}` : `value ${valueOf(before, m)} → ${valueOf(after, m)}`);
  }
  const rulesBefore = ruleCount(before);
  const rulesAfter = ruleCount(after);
  if (!sameJson(before.rules ?? [], after.rules ?? [])) {
    parts.push(rulesBefore === rulesAfter ? `rules changed (${rulesAfter})` : `rules changed (${rulesBefore} → ${rulesAfter})`);
  }
  if (before.runtime !== after.runtime) parts.push(`runtime ${m.code(String(before.runtime), 20)} → ${m.code(String(after.runtime), 20)}`);
  if (before.name !== after.name) {
    parts.push(`renamed “${m.text(String(before.name ?? ''), NAME_CHARS)}” → “${m.text(String(after.name ?? ''), NAME_CHARS)}”`);
  }
  if (before.description !== after.description) parts.push('description changed');
  return parts;
}

function createdDetails(after: SnapshotView, m: ChatMarkup): string[] {
  const boolean = after.type === 'boolean' && typeof after.value === 'boolean';
  const parts = [m.code(String(after.type ?? 'flag'), 20), boolean ? m.bold(after.value ? 'on' : 'off') : `value ${valueOf(after, m)}`];
  const rules = ruleCount(after);
  if (rules > 0) parts.push(`${rules} ${rules === 1 ? 'rule' : 'rules'}`);
  if (after.runtime === 'server') parts.push('server only');
  if (after.archived === true) parts.push('archived');
  return parts;
}

function valueOf(state: SnapshotView, m: ChatMarkup): string {
  return m.code(JSON.stringify(state.value) ?? 'null', VALUE_CHARS);
}

function ruleCount(state: SnapshotView): number {
  return Array.isArray(state.rules) ? state.rules.length : 0;
}

function snapshot(json: unknown): SnapshotView | null {
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as SnapshotView) : null;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function overrideReason(context: Record<string, unknown>): string | null {
  const override = context.override;
  if (override === null || typeof override !== 'object') return null;
  const reason = (override as { reason?: unknown }).reason;
  return typeof reason === 'string' ? reason : '';
}

// ---- change-request.* ------------------------------------------------------------------------------------------

function changeRequest(type: AnyWebhookEventType, data: ChangeRequestEventData, org: string, m: ChatMarkup): WebhookSummary {
  const who = actorPhrase(data.actor, 'The schedule', m);
  const request = `change request “${m.link(data.url, data.title, TITLE_CHARS)}”`;
  const comment = data.comment?.trim() ? m.text(data.comment, COMMENT_CHARS) : null;
  const notes: WebhookSummary['notes'] = [];
  let headline: string;
  switch (type) {
    case 'change-request.opened':
      headline = `${who} opened ${request} in ${org} (${flagList(data.flagKeys, m)})`;
      break;
    case 'change-request.approved':
      // An approval short of the required number leaves the request open.
      headline = `${who} approved ${request} in ${org}${data.state === 'open' ? '; it awaits more approvals' : ''}`;
      if (comment) notes.push({ label: 'Comment', text: comment });
      break;
    case 'change-request.declined':
      headline = `${who} declined ${request} in ${org}`;
      if (comment) notes.push({ label: 'Comment', text: comment });
      break;
    case 'change-request.applied':
      // An apply carries a comment only when it overrode review: the admin's reason.
      headline = `${who} applied ${request} in ${org}${comment ? ', overriding review' : ''}`;
      if (comment) notes.push({ label: 'Reason', text: comment });
      break;
    default:
      headline = `${capitalise(request)} in ${org} could not be applied and failed`;
      if (comment) notes.push({ label: 'Reason', text: comment });
  }
  if (type !== 'change-request.opened') notes.push({ label: 'Author', text: personName(data.author.name, m) });
  if (type !== 'change-request.opened') notes.push({ label: 'Flags', text: flagList(data.flagKeys, m) });
  return { headline, title: data.title, url: data.url, lines: [], more: 0, notes };
}

/** "2 flags: a, b", the first LISTED_ITEMS keys and "and N more". */
function flagList(keys: readonly string[], m: ChatMarkup): string {
  const listed = keys.slice(0, LISTED_ITEMS).map((key) => m.code(key, KEY_CHARS));
  const rest = keys.length - listed.length;
  const noun = keys.length === 1 ? 'flag' : 'flags';
  if (listed.length === 0) return `no flags`;
  return `${count(keys.length)} ${noun}: ${listed.join(', ')}${rest > 0 ? ` and ${count(rest)} more` : ''}`;
}

// ---- review-setting.changed ------------------------------------------------------------------------------------

function reviewSetting(
  data: ReviewSettingChangedData,
  context: WebhookRenderContext,
  organizationId: string,
  org: string,
  m: ChatMarkup,
): WebhookSummary {
  const who = personName(data.user?.name ?? null, m);
  const { before, after } = data;
  const approvals = (n: number): string => `${n} ${n === 1 ? 'approval' : 'approvals'}`;
  const self = (on: boolean): string => `self-approval ${on ? 'on' : 'off'}`;
  let headline: string;
  if (!after.required)
    headline = before.required ? `${who} turned review off in ${org}` : `${who} changed the review setting in ${org}, review stays off`;
  else {
    const settings = [
      approvals(after.approvals) + (before.required && before.approvals !== after.approvals ? ` (was ${before.approvals})` : ''),
      self(after.selfApproval) +
        (before.required && before.selfApproval !== after.selfApproval ? ` (was ${before.selfApproval ? 'on' : 'off'})` : ''),
    ].join(', ');
    headline = before.required ? `${who} changed review in ${org}: ${settings}` : `${who} turned review on in ${org}: ${settings}`;
  }
  return {
    headline,
    title: `Review ${after.required ? 'on' : 'off'}`,
    url: consolePage(context, 'organization', organizationId),
    lines: [],
    more: 0,
    notes: [],
  };
}

// ---- storage.changed -------------------------------------------------------------------------------------------

function storage(data: StorageChangedData, context: WebhookRenderContext, organizationId: string, org: string, m: ChatMarkup): WebhookSummary {
  const files = `${count(data.ids.length)} ${data.ids.length === 1 ? 'file' : 'files'}`;
  const listed = data.ids.slice(0, LISTED_ITEMS);
  return {
    headline: `${m.bold(files)} ${data.change} in ${org}`,
    title: `${files} ${data.change}`,
    url: consolePage(context, 'storage', organizationId),
    lines: listed.map((id) => `• ${m.code(id, KEY_CHARS)}`),
    more: data.ids.length - listed.length,
    notes: [],
  };
}

// ---- webhook.test ----------------------------------------------------------------------------------------------

function test(data: WebhookTestData, context: WebhookRenderContext, org: string, m: ChatMarkup): WebhookSummary {
  const message = data.message?.trim();
  return {
    headline: `This is a test event from Flagstore for ${org}`,
    title: 'Test event',
    url: null,
    lines: message ? [m.text(message, COMMENT_CHARS)] : [],
    more: 0,
    notes: [],
  };
}

// ---- who -------------------------------------------------------------------------------------------------------

/** A person by name, a key by its name, the service itself as `system` (a schedule). */
function actorPhrase(actor: WebhookActor, system: string, m: ChatMarkup): string {
  if (actor.type === 'system') return system;
  if (actor.type === 'apiKey') return actor.name ? `An API key ‘${m.text(actor.name, NAME_CHARS)}’` : 'An API key';
  return personName(actor.name, m);
}

function personName(name: string | null, m: ChatMarkup): string {
  return name?.trim() ? m.bold(m.text(name, NAME_CHARS)) : 'Someone';
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
