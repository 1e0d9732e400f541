import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a stream token grants: one key's stream, until it expires (and only while the key is active). */
export interface StreamGrant {
  organizationId: string;
  keyId: string;
  /** Unix seconds. */
  expiresAt: number;
}

export const STREAM_TOKEN_TTL_SECONDS = 60 * 60;
/**
 * Tokens are issued per 15-minute window: one key gets the same token (so the same stream URL) all window
 * long, valid for 45 to 60 minutes. OFREP's web provider reconnects its stream whenever the URL in a bulk
 * answer changes, and a new connection gets an event at once, which makes it read the bulk answer again: a
 * fresh token on every answer would keep it reconnecting.
 */
export const STREAM_TOKEN_WINDOW_SECONDS = 15 * 60;

/**
 * The `?token=` of the change stream, for browsers (EventSource sends no headers): the organization, the key
 * id and an expiry (at most an hour ahead), signed with a key derived from the deployment's signing secret (so every instance that
 * shares UPLOAD_SIGNING_SECRET accepts the others' tokens, and a token is never an upload signature).
 * `<base64url(organizationId.keyId.expiresAt)>.<base64url(HMAC-SHA256)>`
 */
export class StreamTokens {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('flagstore change-stream token v1').digest();
  }

  sign(organizationId: string, keyId: string, nowMs: number): string {
    const windowEnd = Math.ceil(nowMs / 1000 / STREAM_TOKEN_WINDOW_SECONDS) * STREAM_TOKEN_WINDOW_SECONDS;
    const payload = `${organizationId}.${keyId}.${windowEnd + STREAM_TOKEN_TTL_SECONDS - STREAM_TOKEN_WINDOW_SECONDS}`;
    return `${Buffer.from(payload).toString('base64url')}.${this.signature(payload).toString('base64url')}`;
  }

  /** The grant, or null when the token is malformed, forged or expired. */
  verify(token: string, nowMs: number): StreamGrant | null {
    const [encoded, signature, extra] = token.split('.');
    if (!encoded || !signature || extra !== undefined || token.length > 300) return null;
    const payloadBytes = canonicalBase64url(encoded);
    const given = canonicalBase64url(signature);
    if (!payloadBytes || !given) return null;
    const payload = payloadBytes.toString('utf8');
    const expected = this.signature(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const [organizationId, keyId, expiry] = payload.split('.');
    const expiresAt = Number(expiry);
    if (!organizationId || !keyId || !Number.isSafeInteger(expiresAt) || expiresAt * 1000 <= nowMs) return null;
    return { organizationId, keyId, expiresAt };
  }

  private signature(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}

/**
 * The bytes of `text` when it is exactly how base64url spells them (no padding, no `+` or `/`, no stray
 * characters, no bits set past the last byte), else null. Node's decoder accepts all of those and the signature
 * is compared as bytes, so without this one issued token would be accepted in many spellings: a token is the
 * exact text that was issued, nothing that merely decodes to the same bytes.
 */
function canonicalBase64url(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

/** The deployment's StreamTokens (keyed from UPLOAD_SIGNING_SECRET, or the secret generated into DATA_DIR). */
export const STREAM_TOKENS = Symbol('STREAM_TOKENS');
