import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Who runs the embedded cluster: the process that started its PostgreSQL (a service, or the CLI), written beside
 * the cluster once its server is up, as `<dataDir>/postgres.owner`. A PostgreSQL server outlives a process that
 * was killed (SIGKILL), and only then may a later start stop it: this record is how a start tells that orphan
 * from the database of a service that is still running.
 */
export interface ClusterOwner {
  /** The owning process. */
  pid: number;
  /** Its start time (Linux `/proc/<pid>/stat`), so that a reused pid is not taken for the owner; null elsewhere. */
  startTime: string | null;
  /** The PostgreSQL server it started: the record speaks for that server only. */
  postmasterPid: number;
}

export function ownerFile(dataDir: string): string {
  return join(dataDir, 'postgres.owner');
}

/** Records this process as the owner of the server `postmasterPid`, in one rename (never read half-written). */
export async function recordOwner(dataDir: string, postmasterPid: number): Promise<void> {
  const record: ClusterOwner = { pid: process.pid, startTime: await startTimeOf(process.pid), postmasterPid };
  const file = ownerFile(dataDir);
  const partial = `${file}.${process.pid}`;
  await writeFile(partial, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(partial, file);
}

/** Drops the record once this process has stopped its server; a record of another process is left alone. */
export async function forgetOwner(dataDir: string): Promise<void> {
  const owner = await readOwner(dataDir);
  if (owner?.pid === process.pid) await unlink(ownerFile(dataDir)).catch(() => undefined);
}

/** The record, or null when there is none or it cannot be read as one. */
export async function readOwner(dataDir: string): Promise<ClusterOwner | null> {
  let text: string;
  try {
    text = await readFile(ownerFile(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ClusterOwner>;
    const validPid = (value: unknown): value is number => Number.isInteger(value) && (value as number) > 0;
    if (!validPid(parsed.pid) || !validPid(parsed.postmasterPid)) return null;
    return { pid: parsed.pid, postmasterPid: parsed.postmasterPid, startTime: typeof parsed.startTime === 'string' ? parsed.startTime : null };
  } catch {
    return null;
  }
}

/** Whether the recorded owner still runs: its pid is alive and, where the start time can be read, is the same process. */
export async function isOwnerAlive(owner: ClusterOwner): Promise<boolean> {
  if (!isAlive(owner.pid)) return false;
  if (owner.startTime === null) return true;
  const now = await startTimeOf(owner.pid);
  return now === null || now === owner.startTime;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of `/proc/<pid>/stat` (after the command name, which may hold spaces and parentheses). */
async function startTimeOf(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
