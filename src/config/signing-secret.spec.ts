import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSigningSecret } from './signing-secret';

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

  it('creates the file 0600 whatever the umask, and leaves no temporary file behind', async () => {
    const umask = process.umask(0);
    try {
      await Promise.all(Array.from({ length: 4 }, () => loadSigningSecret(undefined, dir)));
    } finally {
      process.umask(umask);
    }
    expect(statSync(join(dir, 'upload-signing-secret')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['upload-signing-secret']);
  });

  it.each([
    ['0644', 0o644],
    ['0640', 0o640],
    ['0604', 0o604],
    ['0666', 0o666],
  ])('makes an existing secret file of mode %s private again, keeping the secret', async (_name, mode) => {
    const secret = 'b'.repeat(64);
    const path = join(dir, 'upload-signing-secret');
    writeFileSync(path, secret);
    chmodSync(path, mode);
    expect((await loadSigningSecret(undefined, dir)).toString()).toBe(secret);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('leaves a file that is already private as it is', async () => {
    const path = join(dir, 'upload-signing-secret');
    writeFileSync(path, 'c'.repeat(64));
    chmodSync(path, 0o400);
    await loadSigningSecret(undefined, dir);
    expect(statSync(path).mode & 0o777).toBe(0o400);
  });

  it('refuses a damaged secret file', async () => {
    writeFileSync(join(dir, 'upload-signing-secret'), 'short');
    await expect(loadSigningSecret(undefined, dir)).rejects.toThrow(/damaged/);
  });
});
