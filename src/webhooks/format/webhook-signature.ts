import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (decisions.md, "Webhooks (turn 5)", The standard format; standardwebhooks.com): an
 * endpoint's secret is `whsec_` + base64 of its key, a signature is `v1,` + base64 of HMAC-SHA256 of
 * `<msgId>.<timestamp>.<body>` keyed by the key's bytes, so receivers verify our deliveries with any of the
 * specification's libraries.
 */
const SECRET_PREFIX = 'whsec_';
/** The specification allows 24 to 64 bytes; 32 is HMAC-SHA256's block-sized comfort and what decisions.md names. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

export function signWebhook(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  // The receiver signs what it reads in the headers: an integer timestamp, and an id that cannot shift the fields' dots.
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new Error('a webhook timestamp is whole unix seconds');
  if (msgId.length === 0 || msgId.includes('.')) throw new Error('a webhook message id is not empty and holds no full stop');
  const key = keyOf(secret);
  const hmac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${hmac}`;
}

/** Every secret signs: during a rotation the old and the new one both do, and a receiver accepts either (space-separated). */
export function webhookSignatureHeader(secrets: readonly string[], msgId: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new Error('a webhook delivery needs at least one secret to sign with');
  return secrets.map((secret) => signWebhook(secret, msgId, timestampSeconds, body)).join(' ');
}

export function webhookHeaders(secrets: readonly string[], msgId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignatureHeader(secrets, msgId, timestampSeconds, body),
  };
}

/**
 * The key's bytes. The prefix is required: our secrets always carry it, and a string without it is a mistake (a hash,
 * another field) that would otherwise sign with whatever its base64 decoding happens to give.
 */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new Error('a webhook secret holds a key after whsec_');
  return key;
}
