import { cookieValue, csrfTokenOf, generateSessionToken, hashSessionToken, isSessionTokenShaped, sessionCookieHeader } from './session-token';

describe('session tokens', () => {
  it('are 256 random bits in the shape the lookup accepts, hashed and given a CSRF token of their own', () => {
    const token = generateSessionToken();
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(isSessionTokenShaped(token)).toBe(true);
    expect(isSessionTokenShaped(`${token}x`)).toBe(false);
    expect(isSessionTokenShaped(token.slice(1) + '!')).toBe(false);
    expect(hashSessionToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSessionToken(token)).not.toContain(token);
    expect(csrfTokenOf(token)).toBe(csrfTokenOf(token));
    expect(csrfTokenOf(token)).not.toBe(csrfTokenOf(generateSessionToken()));
  });

  it('reads the named cookie among others, quoted or not', () => {
    expect(cookieValue('a=1; flagstore_session=abc; b=2', 'flagstore_session')).toBe('abc');
    expect(cookieValue('flagstore_session="abc"', 'flagstore_session')).toBe('abc');
    expect(cookieValue('xflagstore_session=abc', 'flagstore_session')).toBeUndefined();
    expect(cookieValue('flagstore_session', 'flagstore_session')).toBeUndefined();
    expect(cookieValue(undefined, 'flagstore_session')).toBeUndefined();
  });

  it('sets the cookie HttpOnly, SameSite=Lax on every path, Secure only when asked', () => {
    expect(sessionCookieHeader('t', 60, false)).toBe('flagstore_session=t; Path=/; Max-Age=60; HttpOnly; SameSite=Lax');
    expect(sessionCookieHeader('', 0, true)).toBe('flagstore_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
  });
});
