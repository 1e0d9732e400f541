import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/common/free-port';
import { runningPostmaster } from '../../src/database/embedded-postgres';
import { RunningService, startService, waitForHealth } from '../support/boot-service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const ADMIN_TOKEN = 'shutdown-test-admin-token-0123456789abcdef';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
