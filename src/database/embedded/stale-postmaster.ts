import { existsSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@nestjs/common';

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

/**
 * After a SIGKILL of the service, its PostgreSQL child keeps running and holds `postmaster.pid`.
 * Stop that orphan (fast shutdown) so this start can own the cluster; drop the file if its process is gone.
 */
export async function recoverStalePostmaster(clusterDir: string, logger: Logger): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = await runningPostmaster(clusterDir);
  if (pid === null) {
    logger.warn(`Removing stale ${pidFile} (no server of this cluster is running)`);
    await unlink(pidFile).catch(() => undefined);
    return;
  }
  logger.warn(`Stopping orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) {
    await new Promise((done) => setTimeout(done, 100));
  }
  if (isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 500));
  }
  await unlink(pidFile).catch(() => undefined);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
