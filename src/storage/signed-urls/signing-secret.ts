import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SECRET_FILE = 'upload-signing-secret';

/**
 * The configured secret, or one generated on first boot and kept in `<dataDir>/upload-signing-secret`
 * (mode 0600) so URLs survive restarts. The file is written under a private name and linked into place, so
 * instances booting together never read a half-written secret: the loser of the link reads the winner's.
 */
export async function loadSigningSecret(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const path = join(dataDir, SECRET_FILE);
  await mkdir(dataDir, { recursive: true });
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  try {
    await link(candidate, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(candidate);
  }
  const stored = (await readFile(path, 'utf8')).trim();
  if (stored.length < 32) throw new Error(`${path} is damaged (shorter than 32 characters); delete it to generate a new one`);
  return Buffer.from(stored, 'utf8');
}
