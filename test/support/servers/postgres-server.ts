import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../../src/common/free-port';
import { postgresBinDir } from './binaries';

export interface PostgresServer {
  /** The `postgres` database of this server, as its superuser (trust authentication on loopback). */
  url: string;
  port: number;
  /** Stops the server: SIGINT is PostgreSQL's fast shutdown (connections are cut), SIGKILL a crash. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /**
   * Freezes it and its sessions (SIGSTOP, Linux): connections stay open and nothing is answered, as a hung server;
   * `resume` thaws them.
   */
  pause(): void;
  resume(): void;
  /** Stops it for good and removes its data directory. */
  close(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own (the machine's Debian binaries) on a free loopback port, with no unix
 * socket. As root it runs as the unprivileged `postgres` user, as PostgreSQL requires; it is ended by PID.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries are not installed');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'flagstore-test-pg-server-'));
  const dataDir = join(dir, 'data');
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  execFileSync(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    stdio: 'pipe',
    ...owner,
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn(
      join(bin, 'postgres'),
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
      { stdio: ['ignore', 'ignore', 'pipe'], ...owner },
    );
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${log}`);
      const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections: ${log}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGINT') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    signalServer(running, 'SIGCONT'); // a paused server handles the signal only once it runs
    await exited;
  };

  await start();
  return {
    url,
    port,
    stop,
    start,
    pause: () => signalServer(child, 'SIGSTOP'),
    resume: () => signalServer(child, 'SIGCONT'),
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function signalServer(postmaster: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (postmaster?.pid !== undefined) signalWithChildren(postmaster.pid, signal);
}

/**
 * A PostgreSQL server and every process it started (each session's backend, the background workers), by PID
 * (Linux): SIGSTOP on the postmaster alone would leave open sessions answering. Returns the PIDs signalled.
 */
export function signalWithChildren(postmasterPid: number, signal: NodeJS.Signals): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmasterPid;
      } catch {
        return false; // gone meanwhile
      }
    });
  const pids = [postmasterPid, ...children.map(Number)];
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error; // ended since it was listed
    }
  }
  return pids;
}

function postgresUser(): { uid: number; gid: number } {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    return { uid, gid };
  } catch {
    throw new Error('PostgreSQL refuses to run as root, and there is no postgres user to run it as');
  }
}
