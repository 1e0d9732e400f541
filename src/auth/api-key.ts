import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Permission } from './permission';

/** An issued API key as stored. */
export interface ApiKey {
  id: string;
  organizationId: string;
  name: string;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  keyHash: string;
  permissions: Permission[];
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_PREFIX = 'fsk_';
/** `fsk_` and 32 random bytes in base64url without padding: exactly what generateApiKey() makes. */
const KEY_SHAPE = /^fsk_[A-Za-z0-9_-]{43}$/;

/** A new API key: 256 random bits, prefixed so that leaked keys are easy to recognise in logs and scanners. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Whether a token could be a key at all; one that cannot is refused without a database lookup. */
export function isApiKeyShaped(token: string): boolean {
  return token.length === 47 && KEY_SHAPE.test(token);
}

/**
 * Keys are high-entropy random strings, so a single SHA-256 is enough to make the stored hash useless to a
 * thief (there is nothing to brute-force) and cheap enough to compute on every cache miss.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
  return match?.[1];
}
