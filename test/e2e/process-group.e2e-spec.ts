import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/common/free-port';
import { runningPostmaster } from '../../src/database/embedded-postgres';
import { builtService } from '../support/built-service';
import { RunningService, startService, waitForHealth } from '../support/boot-service';
import { eventually } from '../support/eventually';

const ADMIN_TOKEN = 'process-group-admin-token-0123456789abcdef';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The state letter of a live process (`/proc/<pid>/stat`), or null when it is gone or only a zombie. */
function liveState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' ? null : state;
  } catch {
    return null;
  }
}

/** A PostgreSQL server and the processes it started (its sessions' backends, its workers), by PID (Linux). */
function serverProcesses(postmasterPid: number): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmasterPid;
      } catch {
        return false;
      }
    });
  return [postmasterPid, ...children];
}

/** What is still alive of `pids`. */
const alive = (pids: number[]) => pids.filter((pid) => liveState(pid) !== null);

/** Every process a failed test may have left, killed by PID. */
function killAll(pids: number[]): void {
  for (const pid of alive(pids)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * The embedded PostgreSQL runs in a process group of its own (decisions.md, "The embedded PostgreSQL has its own
 * process group"): a signal sent to the service's group, as Ctrl-C in a terminal or `kill -- -PGID` sends it,
 * reaches only the service, which drains, closes, then stops PostgreSQL; nothing of it is left once the service
 * has exited. In the service's group, SIGINT stopped PostgreSQL first (the drain met ECONNREFUSED, a write in
 * flight failed) and SIGTERM left it running after the service had gone.
 */
describe('the embedded PostgreSQL and the service’s process group', () => {
  let dataDir: string;
  let clusterDir: string;
  let port: number;
  const leftovers: number[] = [];

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-process-group-'));
    chmodSync(dataDir, 0o711); // as root, PostgreSQL runs as `postgres`, which must enter it
    clusterDir = join(dataDir, 'postgres');
    port = await freePort();
  });
  afterEach(async () => {
    const postmaster = await runningPostmaster(clusterDir).catch(() => null);
    killAll([...leftovers, ...(postmaster === null ? [] : serverProcesses(postmaster))]);
    leftovers.length = 0;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const env = () => ({
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    // A connection left open makes the drain serve on for this and a second, then fence for 0.5 s.
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '2',
    SHUTDOWN_GRACE_SECONDS: '20',
    LOG_LEVEL: 'info',
  });

  async function started(): Promise<RunningService> {
    const service = startService(env(), { processGroup: true });
    leftovers.push(service.process.pid!);
    await waitForHealth(port, service);
    return service;
  }

  /** A new session on the embedded cluster, as its superuser: what it answers to `SELECT 1`. */
  async function newSession(): Promise<number> {
    const port = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[3];
    const password = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
    const client = new Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', password, database: 'postgres' });
    await client.connect();
    try {
      return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0].one;
    } finally {
      await client.end();
    }
  }

  /** POST /v1/admin/organizations on `agent`'s connection: its status, or 'cut'. */
  function createOrganization(agent: Agent, name: string): Promise<number | 'cut'> {
    return new Promise((resolve) => {
      const body = JSON.stringify({ name });
      const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', 'Content-Length': String(body.length) };
      const sent = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/admin/organizations', agent, headers }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      sent.on('error', () => resolve('cut'));
      sent.end(body);
    });
  }

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s to the group: the service drains with its database up, then stops it, and nothing of it is left',
    async (signal) => {
      const service = await started();
      const postmaster = await runningPostmaster(clusterDir);
      expect(postmaster).not.toBeNull();
      const server = serverProcesses(postmaster!);
      leftovers.push(...server);
      // A proxy's keep-alive connection: the drain serves on it for about 3 s.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      expect(await createOrganization(agent, 'Before')).toBe(201);

      process.kill(-service.process.pid!, signal);
      await pause(1_000);
      // During the drain the database is up and not shutting down: a write goes through, and a new session opens.
      expect(await createOrganization(agent, 'During the drain')).toBe(201);
      await expect(newSession()).resolves.toBe(1);
      agent.destroy();

      expect(await Promise.race([service.exited, pause(30_000).then(() => 'still running')])).toBe(0);
      // Nothing of PostgreSQL outlives the service: the server and every process it started are gone.
      expect(alive(server)).toEqual([]);
      expect(await runningPostmaster(clusterDir)).toBeNull();
      const output = service.output();
      expect(output).not.toMatch(/ECONNREFUSED|terminating connection due to administrator command|database system is shutting down/);
      expect(output).toMatch(new RegExp(`${signal} received: draining connections`));
    },
  );

  it('after SIGKILL of the service and its group, the next start recovers the cluster and serves its data', async () => {
    const first = await started();
    const agent = new Agent({ keepAlive: false });
    expect(await createOrganization(agent, 'Kept')).toBe(201);
    const postmaster = await runningPostmaster(clusterDir);
    leftovers.push(...serverProcesses(postmaster!));

    process.kill(-first.process.pid!, 'SIGKILL');
    await first.exited;

    const second = await started();
    const listed = await fetch(`http://127.0.0.1:${port}/v1/admin/organizations`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { results: Array<{ name: string }> }).results.map((organization) => organization.name)).toContain('Kept');
    const running = await runningPostmaster(clusterDir);
    leftovers.push(...serverProcesses(running!));

    process.kill(-second.process.pid!, 'SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await runningPostmaster(clusterDir)).toBeNull();
  });

  it('a process that exits on an error it did not catch leaves no PostgreSQL behind', async () => {
    const module = join(builtService().main, '..', 'database', 'embedded-postgres.js');
    const script = `
      const { EmbeddedPostgres } = require(${JSON.stringify(module)});
      new EmbeddedPostgres(process.argv[1]).start().then(() => {
        setTimeout(() => { throw new Error('an error nobody catches'); }, 10);
      });`;
    const child = spawn(process.execPath, ['-e', script, dataDir], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    leftovers.push(child.pid!);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let postmaster: number | null = null;
    await eventually(async () => (postmaster = await runningPostmaster(clusterDir)) !== null || child.exitCode !== null, {
      timeoutMs: 60_000,
      what: 'the embedded PostgreSQL started',
    });
    expect(postmaster).not.toBeNull();
    const server = serverProcesses(postmaster!);
    leftovers.push(...server);
    const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));
    expect(code).toBe(1);
    expect(stderr).toMatch(/an error nobody catches/);
    // Its fast shutdown was sent on the way out; it completes on its own.
    await eventually(() => alive(server).length === 0, { timeoutMs: 15_000, what: 'PostgreSQL gone after the process exited' });
  });
});
