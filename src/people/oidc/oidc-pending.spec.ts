import { openPending, OidcPending, PENDING_LIFETIME_MS, sealPending } from './oidc-pending';

describe('sealing the pending sign-in into a cookie value', () => {
  const secret = Buffer.from('a-signing-secret-of-at-least-32-characters');
  const now = Date.parse('2026-12-04T18:00:00Z');
  const pending: OidcPending = {
    state: 'sT4t3-of-43-characters-xxxxxxxxxxxxxxxxxxx',
    nonce: 'n0nce-of-43-characters-xxxxxxxxxxxxxxxxxxx',
    codeVerifier: 'v3rifier-of-43-characters-xxxxxxxxxxxxxxxx',
    returnTo: '/console/flags?environment=production',
    createdAt: now,
  };

  it('opens what it sealed, for 10 minutes', () => {
    const sealed = sealPending(pending, secret);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(openPending(sealed, secret, now)).toEqual(pending);
    expect(openPending(sealed, secret, now + PENDING_LIFETIME_MS)).toEqual(pending);
    expect(openPending(sealed, secret, now + PENDING_LIFETIME_MS + 1)).toBeNull();
  });

  it('hides what it carries, the PKCE verifier above all, and never seals twice alike', () => {
    const sealed = sealPending(pending, secret);
    const bytes = Buffer.from(sealed, 'base64url').toString('latin1');
    for (const value of [pending.codeVerifier, pending.state, pending.nonce, pending.returnTo]) {
      expect(sealed).not.toContain(value);
      expect(bytes).not.toContain(value);
    }
    expect(sealPending(pending, secret)).not.toBe(sealed);
  });

  it('refuses a value sealed with another secret, or changed in any byte', () => {
    const sealed = sealPending(pending, secret);
    expect(openPending(sealed, 'another-signing-secret-of-32-characters!!', now)).toBeNull();
    const bytes = Buffer.from(sealed, 'base64url');
    for (let index = 0; index < bytes.length; index++) {
      const changed = Buffer.from(bytes);
      changed[index] ^= 0x01;
      expect(openPending(changed.toString('base64url'), secret, now)).toBeNull();
    }
    expect(openPending(bytes.subarray(0, -1).toString('base64url'), secret, now)).toBeNull();
  });

  it('refuses malformed values, and the same bytes spelled with padding or stray characters', () => {
    const sealed = sealPending(pending, secret);
    for (const bad of [
      '',
      'x',
      '.',
      'é',
      `${sealed}=`,
      `${sealed}==`,
      ` ${sealed}`,
      `${sealed}.`,
      `${sealed.slice(0, 8)}\n${sealed.slice(8)}`,
      'A'.repeat(40),
      'A'.repeat(5000),
    ]) {
      expect(openPending(bad, secret, now)).toBeNull();
    }
  });

  it('fits in a cookie with the longest returnTo a sign-in accepts', () => {
    expect(sealPending({ ...pending, returnTo: `/${'r'.repeat(1023)}` }, secret).length).toBeLessThan(2000);
  });
});
