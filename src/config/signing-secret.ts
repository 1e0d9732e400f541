import { Global, Logger, Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from './app-config';

const SECRET_FILE = 'upload-signing-secret';
const PRIVATE_MODE = 0o600;

/**
 * The configured secret, or one generated on first boot and kept in `<dataDir>/upload-signing-secret`
 * (mode 0600) so URLs survive restarts.
 *
 * The file is written under a private name (created 0600, fsynced) and linked into place, so instances
 * booting together never read a half-written secret (the loser of the link reads the winner's), and a crash
 * never leaves an empty or partial file under the real name. An existing file that group or others may read
 * (restored from a backup, copied with `cp`, unpacked from an archive) is made 0600 again, with a warning:
 * whoever can read it can sign upload URLs.
 */
export async function loadSigningSecret(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const path = join(dataDir, SECRET_FILE);
  await mkdir(dataDir, { recursive: true });
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writePrivateFile(candidate, randomBytes(32).toString('hex'));
  let linked = false;
  try {
    await link(candidate, path);
    linked = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(candidate);
  }
  if (linked) await syncDirectory(dataDir);
  await keepPrivate(path);
  const stored = (await readFile(path, 'utf8')).trim();
  if (stored.length < 32) throw new Error(`${path} is damaged (shorter than 32 characters); delete it to generate a new one`);
  return Buffer.from(stored, 'utf8');
}

/** A new file, mode 0600 whatever the umask, whose bytes are on disk before it is linked anywhere. */
async function writePrivateFile(path: string, content: string): Promise<void> {
  const handle = await open(path, 'wx', PRIVATE_MODE);
  try {
    // The umask can only take bits away from 0600, but say it outright: nothing else may read this file.
    await handle.chmod(PRIVATE_MODE);
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes the link itself durable, so the secret a restart reads is the one URLs were signed with. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function keepPrivate(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const { mode } = await handle.stat();
    if ((mode & 0o077) === 0) return;
    try {
      await handle.chmod(PRIVATE_MODE);
    } catch (error) {
      throw new Error(
        `${path} may be read by other users (mode ${(mode & 0o777).toString(8)}) and could not be made private ` +
          `(${(error as Error).message}); chmod 600 it, or set UPLOAD_SIGNING_SECRET`,
        { cause: error },
      );
    }
    new Logger('UploadSigningSecret').warn(
      `${path} could be read by other users (mode ${(mode & 0o777).toString(8)}); it is 0600 again. Anyone who read it can sign upload URLs: delete it to rotate the secret`,
    );
  } finally {
    await handle.close();
  }
}

/** The deployment's signing secret, loaded (or generated) once: upload URLs and stream tokens are signed with it. */
export const SIGNING_SECRET = Symbol('SIGNING_SECRET');

/** Provides SIGNING_SECRET to every module (global); the app imports it, the CLI, which signs nothing, does not. */
@Global()
@Module({
  providers: [
    {
      provide: SIGNING_SECRET,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => loadSigningSecret(config.uploadSigningSecret, config.dataDir),
    },
  ],
  exports: [SIGNING_SECRET],
})
export class SigningSecretModule {}
