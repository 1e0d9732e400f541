import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, get as httpGet, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/common/free-port';
import { runningPostmaster } from '../../src/database/embedded-postgres';
import { RunningService, startService, waitForHealth } from '../support/boot-service';
import { eventually } from '../support/eventually';
import { describeWithBinaries, postgresBinDir } from '../support/servers/binaries';
import { signalWithChildren, startPostgresServer } from '../support/servers/postgres-server';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = 'shutdown-test-admin-token-0123456789abcdef';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** SIGTERM on the real process (src/main.ts): what is in flight finishes, then the process exits 0. */
describe('shutdown on SIGTERM', () => {
  let database: TestDatabase;
  let dataDir: string;
  let port: number;
  let service: RunningService;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-shutdown-'));
    chmodSync(dataDir, 0o711);
    port = await freePort();
    service = startService({
      DATABASE_URL: database.url,
      DATABASE_MIGRATION_URL: database.ownerUrl,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_TOKEN,
      SHUTDOWN_GRACE_SECONDS: '10',
      // With a connection open, the drain serves on for the keep-alive timeout and a second (then a 0.5 s fence) before
      // it stops accepting: with the default 5 s, the first test waited 4 s more after its upload (2 s) had been stored.
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
      LOG_LEVEL: 'warn',
    });
    await waitForHealth(port, service);
  });
  afterAll(async () => {
    if (service.process.exitCode === null) service.process.kill('SIGKILL');
    await service.exited;
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function call(path: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<Record<string, unknown>> {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${token}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  }

  it('lets an upload in flight finish and be stored, then exits 0', async () => {
    const organization = await call('/v1/admin/organizations', ADMIN_TOKEN, { method: 'POST', body: { name: 'Shutdown' } });
    const key = await call(`/v1/admin/organizations/${String(organization.id)}/api-keys`, ADMIN_TOKEN, {
      method: 'POST',
      body: { name: 'uploader', permissions: ['STORAGE_WRITE'] },
    });
    const body = randomBytes(4 * 1024 * 1024);
    const signed = await call(`/v1/storage/signed-url?contentType=video/mp4&size=${body.length}`, String(key.key));
    const target = new URL(String(signed.url));

    const upload = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: `${target.pathname}${target.search}`,
      headers: { 'Content-Type': 'video/mp4', 'Content-Length': String(body.length) },
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      upload.on('response', (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      upload.on('error', reject);
    });
    const piece = body.length / 8;
    upload.write(body.subarray(0, piece));
    await pause(200);
    service.process.kill('SIGTERM');
    let exitedEarly = false;
    void service.exited.then(() => (exitedEarly = true));
    // The rest comes over the next two seconds, while the instance is shutting down.
    for (let offset = piece; offset < body.length; offset += piece) {
      await pause(250);
      expect(exitedEarly).toBe(false);
      upload.write(body.subarray(offset, offset + piece));
    }
    upload.end();

    const answered = await answer;
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toMatchObject({ id: signed.mediaId, size: body.length, state: 'complete' });
    expect(await service.exited).toBe(0);

    const db = new Client({ connectionString: database.adminUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT state, checksum FROM storage_items WHERE id = $1', [signed.mediaId]);
      expect(rows).toEqual([{ state: 'complete', checksum: createHash('sha256').update(body).digest('hex') }]);
    } finally {
      await db.end();
    }
  });
});

/**
 * `npm start`, then Ctrl-C with nothing connected: there is nothing to drain, so the process stops at once and
 * stops its embedded PostgreSQL before it exits, instead of waiting out the keep-alive period (here a minute)
 * while the prompt is already back.
 */
describe('shutdown with no connection open (embedded PostgreSQL)', () => {
  it('exits without waiting out the keep-alive period, its database stopped', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-shutdown-idle-'));
    chmodSync(dataDir, 0o711); // as root, PostgreSQL runs as `postgres`, which must enter it
    const port = await freePort();
    const service = startService({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '60',
      SHUTDOWN_GRACE_SECONDS: '90',
      LOG_LEVEL: 'warn',
    });
    try {
      await healthyWithoutKeepAlive(port, service);
      const clusterDir = join(dataDir, 'postgres');
      expect(await runningPostmaster(clusterDir)).not.toBeNull();

      service.process.kill('SIGTERM');
      // Waiting out the drain would take over 60 s (the keep-alive period and the fence).
      const outcome = await Promise.race([service.exited, pause(30_000).then(() => 'still running')]);
      expect(outcome).toBe(0);
      // PostgreSQL removes its pid file last when it stops.
      expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false);
      expect(await runningPostmaster(clusterDir)).toBeNull();
    } finally {
      if (service.process.exitCode === null) service.process.kill('SIGKILL');
      await service.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Health answers 200 on a connection that closes with its answer, so that none is left open. */
async function healthyWithoutKeepAlive(port: number, service: RunningService): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (service.process.exitCode !== null) throw new Error(`service exited:\n${service.output()}`);
    const status = await new Promise<number>((resolve) => {
      httpGet({ host: '127.0.0.1', port, path: '/health', agent: false, headers: { Connection: 'close' } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      }).on('error', () => resolve(0));
    });
    if (status === 200) return;
    await pause(200);
  }
  throw new Error(`service did not become healthy:\n${service.output()}`);
}

/**
 * SHUTDOWN_GRACE_SECONDS bounds the whole shutdown, whatever the database does: gone (killed, or a server that
 * stopped) or never answering. A proxy's idle keep-alive connection is open, so the drain has its full part.
 */
describe('shutdown with the database gone', () => {
  const GRACE_SECONDS = 4;
  // What the test process adds around the service's own shutdown: delivering the signal and the exit.
  const SLACK_MS = 750;

  /** A keep-alive connection, used once and left open as a proxy leaves it. */
  async function keepAliveConnection(port: number): Promise<Agent> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await new Promise<void>((resolve, reject) => {
      httpGet({ host: '127.0.0.1', port, path: '/health/live', agent }, (response) => {
        response.resume();
        response.on('end', () => resolve());
      }).on('error', reject);
    });
    return agent;
  }

  async function shutdownTime(service: RunningService): Promise<{ code: number | null; elapsedMs: number }> {
    const started = Date.now();
    service.process.kill('SIGTERM');
    const code = await Promise.race([service.exited, pause(60_000).then(() => null)]);
    return { code, elapsedMs: Date.now() - started };
  }

  it.each([
    ['was killed', (pid: number) => (process.kill(pid, 'SIGKILL'), [])],
    ['hangs', (pid: number) => signalWithChildren(pid, 'SIGSTOP')],
  ])('ends within the grace period when the embedded PostgreSQL %s, and leaves no server behind', async (_what, fail) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-shutdown-gone-'));
    chmodSync(dataDir, 0o711);
    const clusterDir = join(dataDir, 'postgres');
    const port = await freePort();
    const service = startService({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      LOG_LEVEL: 'warn',
    });
    let agent: Agent | undefined;
    let frozen: number[] = [];
    try {
      await waitForHealth(port, service);
      const postmaster = await runningPostmaster(clusterDir);
      expect(postmaster).not.toBeNull();
      frozen = fail(postmaster!);
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 503, {
        timeoutMs: 10_000,
        what: 'readiness reporting the database down',
      });
      agent = await keepAliveConnection(port);

      const { code, elapsedMs } = await shutdownTime(service);
      expect(elapsedMs).toBeLessThan(GRACE_SECONDS * 1000 + SLACK_MS);
      expect(code).toBe(0);
      expect(await runningPostmaster(clusterDir)).toBeNull();
    } finally {
      agent?.destroy();
      if (service.process.exitCode === null) service.process.kill('SIGKILL');
      await service.exited;
      await stopLeftover(clusterDir);
      // The service kills a hung postmaster; its frozen sessions would stay behind, stopped, without this.
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describeWithBinaries('a PostgreSQL server of its own', { postgres: postgresBinDir() })('with DATABASE_URL', () => {
    it('ends within the grace period when the database server hangs with a write in flight', async () => {
      const pg = await startPostgresServer();
      const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-shutdown-hung-'));
      const port = await freePort();
      const service = startService({
        DATABASE_URL: pg.url,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
        LOG_LEVEL: 'warn',
      });
      try {
        await waitForHealth(port, service);
        pg.pause();
        // A write waits on the frozen server (for up to 9 s, the client's statement timeout) while shutdown begins.
        const write = new Promise<number | 'cut'>((resolve) => {
          const body = JSON.stringify({ name: 'Frozen' });
          const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', 'Content-Length': String(body.length) };
          const sent = httpRequest(
            { host: '127.0.0.1', port, method: 'POST', path: '/v1/admin/organizations', agent: false, headers },
            (response) => {
              response.resume();
              response.on('end', () => resolve(response.statusCode ?? 0));
              response.on('error', () => resolve('cut'));
            },
          );
          sent.on('error', () => resolve('cut'));
          sent.end(body);
        });
        await pause(300);

        const { code, elapsedMs } = await shutdownTime(service);
        expect(elapsedMs).toBeLessThan(GRACE_SECONDS * 1000 + SLACK_MS);
        expect(code).toBe(0);
        // Its connection was cut at the end of the drain, or it was answered: it is not left hanging.
        expect(['cut', 503]).toContain(await write);
      } finally {
        if (service.process.exitCode === null) service.process.kill('SIGKILL');
        await service.exited;
        pg.resume();
        await pg.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});

/** A PostgreSQL server that a failed test left running in its cluster, stopped by PID. */
async function stopLeftover(clusterDir: string): Promise<void> {
  const pid = await runningPostmaster(clusterDir);
  if (pid !== null) signalWithChildren(pid, 'SIGKILL');
}
