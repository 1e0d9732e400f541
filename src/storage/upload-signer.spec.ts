import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSigningSecret, NonAllocatedGrant, PreallocatedGrant, UploadSigner } from './upload-signer';

describe('UploadSigner', () => {
  const signer = new UploadSigner(Buffer.from('a-test-secret-that-is-long-enough'));
  const now = Date.UTC(2030, 0, 1);
  const put: PreallocatedGrant = {
    mode: 'put',
    organizationId: '11111111-1111-4111-8111-111111111111',
    mediaId: '22222222-2222-4222-8222-222222222222',
    size: 1024,
    contentType: 'image/png',
    expiresAt: now / 1000 + 900,
  };
  const post: NonAllocatedGrant = {
    mode: 'post',
    organizationId: put.organizationId,
    nonce: '33333333-3333-4333-8333-333333333333',
    expiresAt: now / 1000 + 900,
  };

  it('accepts its own signature until the expiry', () => {
    expect(signer.verify(put, signer.sign(put), now)).toEqual({ ok: true, grant: put });
    expect(signer.verify(post, signer.sign(post), now)).toEqual({ ok: true, grant: post });
    expect(signer.verify(put, signer.sign(put), put.expiresAt * 1000 - 1).ok).toBe(true);
  });

  it('rejects an expired URL as expired', () => {
    expect(signer.verify(put, signer.sign(put), put.expiresAt * 1000)).toEqual({ ok: false, reason: 'expired' });
  });

  it.each([
    ['organization', { organizationId: '44444444-4444-4444-8444-444444444444' }],
    ['item', { mediaId: '55555555-5555-4555-8555-555555555555' }],
    ['size', { size: 1025 }],
    ['content type', { contentType: 'text/html' }],
    ['expiry (a later one reads as tampered, not as valid)', { expiresAt: put.expiresAt + 3600 }],
  ])('rejects a URL whose %s was changed', (_field, change) => {
    expect(signer.verify({ ...put, ...change }, signer.sign(put), now)).toEqual({ ok: false, reason: 'signature' });
  });

  it('does not accept one mode for the other, nor another secret', () => {
    const asPost: NonAllocatedGrant = { ...post, nonce: put.mediaId };
    expect(signer.verify(asPost, signer.sign(put), now).ok).toBe(false);
    const other = new UploadSigner(Buffer.from('another-secret-that-is-long-enough'));
    expect(other.verify(put, signer.sign(put), now)).toEqual({ ok: false, reason: 'signature' });
  });

  it('rejects missing and malformed signatures', () => {
    expect(signer.verify(put, undefined, now)).toEqual({ ok: false, reason: 'malformed' });
    expect(signer.verify(put, 'short', now)).toEqual({ ok: false, reason: 'malformed' });
    const signature = signer.sign(put);
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    expect(signer.verify(put, flipped, now)).toEqual({ ok: false, reason: 'signature' });
  });
});

describe('loadSigningSecret', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'signer-spec-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses the configured secret and writes nothing', async () => {
    expect((await loadSigningSecret('configured-secret-value', dir)).toString()).toBe('configured-secret-value');
    expect(() => statSync(join(dir, 'upload-signing-secret'))).toThrow();
  });

  it('generates a secret once, mode 0600, and reads the same one back', async () => {
    const first = await loadSigningSecret(undefined, join(dir, 'nested'));
    const path = join(dir, 'nested', 'upload-signing-secret');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(first.toString());
    expect(first.length).toBe(64);
    const again = await Promise.all([loadSigningSecret(undefined, join(dir, 'nested')), loadSigningSecret(undefined, join(dir, 'nested'))]);
    expect(again.map(String)).toEqual([first.toString(), first.toString()]);
  });

  it('agrees on one secret when several instances start at once', async () => {
    const secrets = await Promise.all(Array.from({ length: 8 }, () => loadSigningSecret(undefined, dir)));
    expect(new Set(secrets.map(String)).size).toBe(1);
  });

  it('refuses a damaged secret file', async () => {
    writeFileSync(join(dir, 'upload-signing-secret'), 'short');
    await expect(loadSigningSecret(undefined, dir)).rejects.toThrow(/damaged/);
  });
});
