import { existsSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@nestjs/common';
import { DatabaseInUseError, DatabaseSetupError } from '../database-setup-error';
import { isAlive, isOwnerAlive, readOwner } from './cluster-owner';

/**
 * The pid of a live PostgreSQL server running this cluster, or null. A `postmaster.pid` whose process is
 * gone, or belongs to something else, is stale.
 */
export async function runningPostmaster(clusterDir: string): Promise<number | null> {
  let pid: number;
  try {
    pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) && (await isPostgresOf(pid, clusterDir)) ? pid : null;
}

/** What a start finds in the cluster's folder. */
export type ClusterUse =
  /** No server runs it (a `postmaster.pid` left behind is stale). */
  | { kind: 'free'; stalePidFile: boolean }
  /** Its server runs, and the process that started it is gone (killed): this start may stop it. */
  | { kind: 'orphaned'; postmasterPid: number; ownerPid: number }
  /** Its server runs for a live process (`ownerPid`), or for one nobody recorded (null): hands off. */
  | { kind: 'in-use'; postmasterPid: number; ownerPid: number | null };

/**
 * The one rule for starting an embedded cluster, the server's and the CLI's: a cluster can be run by one process.
 * A running server is stopped only when the record of the process that started it (cluster-owner.ts) names that
 * very server and a process that is gone; any other running server is someone else's.
 */
export async function clusterUse(dataDir: string, clusterDir: string): Promise<ClusterUse> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  let postmasterPid: number | null;
  try {
    postmasterPid = await runningPostmaster(clusterDir);
  } catch (error) {
    throw new DatabaseSetupError(`Cannot read ${pidFile}: ${(error as Error).message}`);
  }
  if (postmasterPid === null) return { kind: 'free', stalePidFile: existsSync(pidFile) };
  const owner = await readOwner(dataDir);
  if (owner === null || owner.postmasterPid !== postmasterPid) return { kind: 'in-use', postmasterPid, ownerPid: null };
  if (await isOwnerAlive(owner)) return { kind: 'in-use', postmasterPid, ownerPid: owner.pid };
  return { kind: 'orphaned', postmasterPid, ownerPid: owner.pid };
}

/**
 * Makes the cluster this process's to start: refuses (DATABASE_IN_USE, nothing touched) when its server runs for
 * another process; after a SIGKILL of the process that started it, stops that orphan (fast shutdown); drops a
 * `postmaster.pid` whose process is gone.
 */
export async function claimCluster(dataDir: string, clusterDir: string, logger: Logger): Promise<void> {
  const use = await clusterUse(dataDir, clusterDir);
  const pidFile = join(clusterDir, 'postmaster.pid');
  switch (use.kind) {
    case 'in-use':
      throw clusterInUse(dataDir, clusterDir, use);
    case 'free':
      if (use.stalePidFile) {
        logger.warn(`Removing stale ${pidFile} (no server of this cluster is running)`);
        await unlink(pidFile).catch(() => undefined);
      }
      return;
    case 'orphaned':
      logger.warn(`Stopping orphaned PostgreSQL (pid ${use.postmasterPid}) left by an earlier run (pid ${use.ownerPid}, gone)`);
      await stopServer(use.postmasterPid);
      await unlink(pidFile).catch(() => undefined);
  }
}

/** The refusal, naming the cluster, its server and (when known) the process that runs it. */
export function clusterInUse(dataDir: string, clusterDir: string, use: { postmasterPid: number; ownerPid: number | null }): DatabaseInUseError {
  const shared = 'and one cluster cannot be shared by two processes. Nothing was changed.';
  const message =
    use.ownerPid !== null
      ? `DATA_DIR ${dataDir} is in use: its embedded PostgreSQL (${clusterDir}, pid ${use.postmasterPid}) runs for ` +
        `another process (pid ${use.ownerPid}), ${shared} Stop that process first, or give this one a DATA_DIR of ` +
        'its own or a DATABASE_URL.'
      : `DATA_DIR ${dataDir} is in use: its embedded PostgreSQL (${clusterDir}, pid ${use.postmasterPid}) is running, ` +
        `and no record says which process started it (by hand, by an earlier version, or one starting now), ${shared} ` +
        `If no service uses this DATA_DIR, stop that server (kill -INT ${use.postmasterPid}) and retry; otherwise give ` +
        'this process a DATA_DIR of its own or a DATABASE_URL.';
  return new DatabaseInUseError(message, clusterDir, use.postmasterPid);
}

async function stopServer(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) {
    await new Promise((done) => setTimeout(done, 100));
  }
  if (isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 500));
  }
}

async function isPostgresOf(pid: number, clusterDir: string): Promise<boolean> {
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.some((part) => part.endsWith('postgres')) && cmdline.includes(clusterDir);
  } catch {
    // No procfs (macOS): trust the pid file, as PostgreSQL itself would.
    return true;
  }
}
