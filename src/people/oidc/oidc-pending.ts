import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** A sign-in must come back from the provider within 10 minutes of its start. */
export const PENDING_LIFETIME_MS = 10 * 60 * 1000;

/** What the browser carries between the start of a sign-in and the provider's callback. */
export interface OidcPending {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Where the person goes once signed in: a path on this service. */
  returnTo: string;
  /** Milliseconds since the epoch, by the clock of the instance that started the sign-in. */
  createdAt: number;
}

export function pendingExpired(pending: OidcPending, now: number): boolean {
  return now - pending.createdAt > PENDING_LIFETIME_MS;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Browsers keep cookies of up to 4096 bytes: a longer value was never issued here. */
const MAX_SEALED_LENGTH = 4096;

/**
 * The pending sign-in as a cookie value: AES-256-GCM under a key derived from `secret` (HKDF-SHA256, its own label,
 * so the key is never an upload signature or a stream token's), `base64url(iv | ciphertext | tag)`.
 *
 * Sealed, not merely signed: the value carries the PKCE code verifier, which openid-client's documentation asks to
 * keep encrypted, so that a cookie that leaks (a log, a proxy) does not hand over the verifier with it. GCM's tag
 * authenticates the whole value (OpenSSL compares it in constant time): a changed byte, another secret or a value
 * spelled otherwise is refused.
 */
export function sealPending(pending: OidcPending, secret: Buffer | string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', pendingKey(secret), iv);
  const { state, nonce, codeVerifier, returnTo, createdAt } = pending;
  const plaintext = JSON.stringify([state, nonce, codeVerifier, returnTo, createdAt]);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

/** The pending sign-in, or null when the value is malformed, forged, sealed with another secret, or expired at `now`. */
export function openPending(value: string, secret: Buffer | string, now: number): OidcPending | null {
  if (value.length > MAX_SEALED_LENGTH) return null;
  const sealed = Buffer.from(value, 'base64url');
  // Node's decoder skips stray characters and padding: only the exact spelling that was issued is accepted.
  if (sealed.toString('base64url') !== value || sealed.length <= IV_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv('aes-256-gcm', pendingKey(secret), sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  let plaintext: string;
  try {
    plaintext = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null; // the tag does not match
  }
  // Authentic, so written by sealPending: its shape needs no checking.
  const [state, nonce, codeVerifier, returnTo, createdAt] = JSON.parse(plaintext) as [string, string, string, string, number];
  const pending = { state, nonce, codeVerifier, returnTo, createdAt };
  return pendingExpired(pending, now) ? null : pending;
}

function pendingKey(secret: Buffer | string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'flagstore oidc pending v1', 32));
}
