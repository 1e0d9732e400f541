import type { components } from '../../.generated/api';

export type WebhookEndpoint = components['schemas']['WebhookEndpointDto'];
export type WebhookEventType = WebhookEndpoint['events'][number];
export type WebhookFormat = WebhookEndpoint['format'];
export type WebhookDelivery = components['schemas']['WebhookDeliveryDto'];

/** The events an endpoint can ask for, grouped as the form shows them (decisions.md, "Webhooks (turn 5)"). */
export const EVENT_GROUPS: ReadonlyArray<{ group: string; events: ReadonlyArray<{ type: WebhookEventType; label: string }> }> = [
  { group: 'Flags', events: [{ type: 'flag.changed', label: 'Flag changed (one event per save, import or applied request)' }] },
  {
    group: 'Change requests',
    events: [
      { type: 'change-request.opened', label: 'Opened' },
      { type: 'change-request.approved', label: 'Approved' },
      { type: 'change-request.declined', label: 'Declined' },
      { type: 'change-request.applied', label: 'Applied' },
      { type: 'change-request.failed', label: 'Failed to apply' },
    ],
  },
  { group: 'Review setting', events: [{ type: 'review-setting.changed', label: 'Review setting changed' }] },
  { group: 'Storage', events: [{ type: 'storage.changed', label: 'Files uploaded, deleted or purged' }] },
];

export const FORMATS: ReadonlyArray<{ format: WebhookFormat; label: string }> = [
  { format: 'standard', label: 'Standard Webhooks JSON (signed)' },
  { format: 'slack', label: 'Slack' },
  { format: 'discord', label: 'Discord' },
];

export function formatLabel(format: WebhookFormat): string {
  return FORMATS.find((option) => option.format === format)?.label ?? format;
}

/** How far into the path a shortened URL goes: a chat's URL ends in its token, which a list need not show. */
const SHOWN_PATH = 24;

/**
 * A URL as a list shows it: host and the start of the path, without scheme, user info or query (a chat's webhook
 * URL carries its token in the path's end, others in the query).
 */
export function shortUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.length > SHOWN_PATH * 2 ? `${url.slice(0, SHOWN_PATH * 2)}…` : url;
  }
  const path = parsed.pathname === '/' ? '' : parsed.pathname;
  const shownPath = path.length > SHOWN_PATH ? `${path.slice(0, SHOWN_PATH)}…` : path;
  return `${parsed.host}${shownPath}${parsed.search ? '?…' : ''}`;
}

/** The flag keys field: keys separated by commas, spaces or lines; none means every flag (null). */
export function parseFlagKeys(text: string): string[] | null {
  const keys = text.split(/[\s,]+/).filter(Boolean);
  return keys.length > 0 ? [...new Set(keys)] : null;
}

export function flagKeysText(keys: string[] | null): string {
  return keys ? keys.join(', ') : '';
}

/**
 * The lines that offer "Redeliver": an event's newest line (lines come newest first), unless the event is still
 * waiting for its next attempt (sending it again then would only queue a second copy behind it).
 */
export function redeliverable(lines: readonly WebhookDelivery[]): Set<WebhookDelivery> {
  const seen = new Set<string>();
  const offered = new Set<WebhookDelivery>();
  for (const line of lines) {
    if (seen.has(line.eventId)) continue;
    seen.add(line.eventId);
    if (line.status !== 'pending') offered.add(line);
  }
  return offered;
}
