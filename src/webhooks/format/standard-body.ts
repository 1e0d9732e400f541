import { WebhookEvent } from '../webhook-event';

/**
 * The standard format's body (decisions.md, "Webhooks (turn 5)": `{type, timestamp, data}`, the timestamp being when
 * the event happened, ISO 8601), held to `maxBytes` of UTF-8.
 *
 * A body over the cap is not sent as it is (the sender refuses it), so the event is shortened in a way a receiver can
 * tell and act on, rather than dropped:
 * - `flag.changed`: every change loses `before` and `after` and `data.truncated` is true (the receiver reads the
 *   states from the API); if that is still too large, the first changes that fit are kept and `data.omittedChanges`
 *   says how many follow;
 * - `storage.changed`: the first `ids` that fit, `data.truncated` and `data.omittedIds`;
 * - `change-request.*`: the first `flagKeys` that fit, `data.truncated` and `data.omittedFlagKeys`.
 * The other events are small by construction (bounded fields); should one still be too large, its `data` is only
 * `{truncated: true}`, so that the delivery, its id and its type still reach the receiver.
 */
export function standardBody(event: WebhookEvent, maxBytes: number): string {
  const { type } = event;
  const timestamp = event.createdAt.toISOString();
  const whole = JSON.stringify({ type, timestamp, data: event.data });
  if (bytes(whole) <= maxBytes) return whole;

  const data = event.data as unknown as Record<string, unknown>;
  const shortened = shorten(type, data, (shorter) => JSON.stringify({ type, timestamp, data: shorter }), maxBytes);
  return shortened ?? JSON.stringify({ type, timestamp, data: { truncated: true } });
}

type Serialise = (data: Record<string, unknown>) => string;

function shorten(type: string, data: Record<string, unknown>, serialise: Serialise, maxBytes: number): string | null {
  if (type === 'flag.changed' && Array.isArray(data.changes)) {
    const changes = data.changes.map((change: Record<string, unknown>) => {
      const { before: _before, after: _after, ...rest } = change;
      return rest;
    });
    const withoutStates = serialise({ ...data, changes, truncated: true });
    if (bytes(withoutStates) <= maxBytes) return withoutStates;
    return firstThatFit({ ...data, changes, truncated: true }, 'changes', 'omittedChanges', serialise, maxBytes);
  }
  if (type === 'storage.changed' && Array.isArray(data.ids)) {
    return firstThatFit({ ...data, truncated: true }, 'ids', 'omittedIds', serialise, maxBytes);
  }
  if (type.startsWith('change-request.') && Array.isArray(data.flagKeys)) {
    return firstThatFit({ ...data, truncated: true }, 'flagKeys', 'omittedFlagKeys', serialise, maxBytes);
  }
  return null;
}

/**
 * `data` with the first items of `data[field]` that fit and `data[omittedField]` counting the rest; null when not even
 * the data without any item fits. The skeleton is measured with every item omitted, the largest count there can be, so
 * the final body is never larger than measured.
 */
function firstThatFit(data: Record<string, unknown>, field: string, omittedField: string, serialise: Serialise, maxBytes: number): string | null {
  const items = data[field] as unknown[];
  let budget = maxBytes - bytes(serialise({ ...data, [field]: [], [omittedField]: items.length }));
  if (budget < 0) return null;
  let kept = 0;
  for (const item of items) {
    const size = bytes(JSON.stringify(item)) + (kept > 0 ? 1 : 0);
    if (size > budget) break;
    budget -= size;
    kept += 1;
  }
  return serialise({ ...data, [field]: items.slice(0, kept), [omittedField]: items.length - kept });
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
