import { createHash, createHmac, randomBytes } from 'node:crypto';

/** The session cookie's name (README, "People and sessions"). */
export const SESSION_COOKIE = 'flagstore_session';

/** 32 random bytes in base64url without padding: exactly what generateSessionToken() makes. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A new session token: 256 random bits, the cookie's value; only its hash is stored. */
export function generateSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a cookie value could be a session token at all; one that cannot is refused without a lookup. */
export function isSessionTokenShaped(token: string): boolean {
  return token.length === 43 && TOKEN_SHAPE.test(token);
}

/** What the database keeps of a token (as for API keys: random tokens need no slow hash). */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The session's CSRF token, derived from its secret token rather than stored: whoever can compute it holds the
 * cookie, which a page of another site can make the browser send but never read (HttpOnly).
 */
export function csrfTokenOf(token: string): string {
  return createHmac('sha256', token).update('flagstore csrf').digest('base64url');
}

/** The value of the named cookie in a Cookie header, or undefined; the first one wins, as browsers send the most specific first. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator === -1 || part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
  }
  return undefined;
}

/** The Set-Cookie header that stores a session (maxAgeSeconds > 0) or clears it (0). */
export function sessionCookieHeader(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${token}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
}
