import { StreamTokens, STREAM_TOKEN_TTL_SECONDS, STREAM_TOKEN_WINDOW_SECONDS } from './stream-token';

describe('StreamTokens', () => {
  const tokens = new StreamTokens(Buffer.from('a-signing-secret-of-at-least-32-characters'));
  const now = Date.parse('2026-12-04T18:00:00Z');
  const organizationId = '7b0a4c1e-2f0e-4d5b-9a57-0d1c2b3a4f5e';
  const keyId = '0e6f3a2b-5c4d-4e8f-9a1b-2c3d4e5f6a7b';

  it('grants the key it was signed for, for 45 to 60 minutes, one token per 15-minute window', () => {
    const window = STREAM_TOKEN_WINDOW_SECONDS * 1000;
    // Just after a window starts (`now` is on a boundary), a token lasts the full hour...
    const token = tokens.sign(organizationId, keyId, now + 1);
    expect(tokens.verify(token, now + 1)).toEqual({ organizationId, keyId, expiresAt: now / 1000 + STREAM_TOKEN_TTL_SECONDS });
    expect(tokens.verify(token, now + STREAM_TOKEN_TTL_SECONDS * 1000 - 1)).not.toBeNull();
    expect(tokens.verify(token, now + STREAM_TOKEN_TTL_SECONDS * 1000)).toBeNull();
    // ...and every answer of that window carries the very same token (one stream URL), 45 minutes at least.
    expect(tokens.sign(organizationId, keyId, now + window)).toBe(token);
    expect(tokens.sign(organizationId, keyId, now + window + 1)).not.toBe(token);
    expect(tokens.verify(tokens.sign(organizationId, keyId, now), now)!.expiresAt).toBe(
      now / 1000 + STREAM_TOKEN_TTL_SECONDS - STREAM_TOKEN_WINDOW_SECONDS,
    );
  });

  it('refuses a token signed with another secret, a changed payload, and malformed ones', () => {
    const token = tokens.sign(organizationId, keyId, now);
    const other = new StreamTokens(Buffer.from('another-signing-secret-of-32-characters!!'));
    expect(other.verify(token, now)).toBeNull();
    const [, signature] = token.split('.');
    const forged = `${Buffer.from(`${organizationId}.${keyId}.${now / 1000 + 10 * STREAM_TOKEN_TTL_SECONDS}`).toString('base64url')}.${signature}`;
    expect(tokens.verify(forged, now)).toBeNull();
    for (const bad of ['', 'x', 'a.b', `${token}.x`, token.slice(0, -2), 'é.é']) expect(tokens.verify(bad, now)).toBeNull();
  });

  it('accepts only the spelling it issued: other base64 spellings of the same bytes are refused', () => {
    const token = tokens.sign(organizationId, keyId, now);
    expect(tokens.verify(token, now)).not.toBeNull();
    const [encoded, signature] = token.split('.');
    // The same bytes as standard base64 (+ and /), with padding, or with bits the last character holds beyond them.
    const standard = (part: string) => Buffer.from(part, 'base64url').toString('base64');
    const lastChar = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 32 bytes are 43 characters, the last holding 4 bits: the 2 bits below them do not change the bytes.
    const sibling = alphabet[alphabet.indexOf(lastChar) ^ 1];
    expect(Buffer.from(signature.slice(0, -1) + sibling, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    const spellings = [
      `${encoded}.${signature.slice(0, -1)}${sibling}`,
      `${encoded}.${signature}=`,
      `${encoded}=.${signature}`,
      `${standard(encoded)}.${standard(signature)}`,
      `${encoded}.${signature.slice(0, 10)} ${signature.slice(10)}`,
      `${encoded}.${signature.slice(0, 10)}!${signature.slice(10)}`,
      `${encoded.slice(0, 8)}\n${encoded.slice(8)}.${signature}`,
    ];
    for (const spelling of spellings) {
      expect(spelling).not.toBe(token);
      expect(tokens.verify(spelling, now)).toBeNull();
    }
  });
});
