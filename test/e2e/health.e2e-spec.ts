import { renameSync } from 'node:fs';
import { createServer, Server, Socket } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { freePort } from '../../src/common/free-port';
import { LogCapture } from '../support/log-capture';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Every app of this file logs its Nest lines here: nestjs-pino sends them to the logger of the first app created in
 * the process (a module-level logger), which is `t` below, created with this destination.
 */
const log = new LogCapture();

/** An answer's body has nothing of a failed check but its status. */
function expectStatusesOnly(body: { error?: Record<string, object>; details: Record<string, object> }): void {
  for (const entries of [body.error ?? {}, body.details]) {
    for (const entry of Object.values(entries)) expect(Object.keys(entry)).toEqual(['status']);
  }
}

describe('health', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info' }, { logDestination: log });
  });
  afterAll(() => t.close());

  it('GET /health/live answers 200 without asking any dependency', async () => {
    const live = await request(t.http).get('/health/live').expect(200);
    expect(live.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
    expect(live.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
  });

  it('GET /health/ready checks the database, its migrations and the object store (Redis only when configured)', async () => {
    const ready = await request(t.http).get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
    const checks = ['database', 'migrations', 'objectStore', ...(t.config.redisUrl ? ['redis'] : [])];
    expect(Object.keys(ready.body.details).sort()).toEqual(checks.sort());
    for (const check of checks) expect(ready.body.details[check].status).toBe('up');
  });

  it('GET /health is readiness and keeps its original body', async () => {
    await request(t.http).get('/health').expect(200, { status: 'ok', database: 'up' });
  });

  it('needs no key, and lives outside /v1', async () => {
    await request(t.http).get('/health/ready').set('Authorization', 'Bearer not-a-key').expect(200);
    await request(t.http).get('/v1/health/ready').expect(404);
  });

  it('is not ready while a migration is pending, and is again once it is applied', async () => {
    const { rows } = await t.db.query<{ id: number; timestamp: string; name: string }>(
      'DELETE FROM migrations WHERE id = (SELECT max(id) FROM migrations) RETURNING id, timestamp, name',
    );
    try {
      const ready = await request(t.http).get('/health/ready').expect(503);
      expect(ready.body.status).toBe('error');
      expect(ready.body.error).toEqual({ migrations: { status: 'down' } });
      expect(ready.body.details.database).toEqual({ status: 'up' });
      expectStatusesOnly(ready.body);
      const health = await request(t.http).get('/health').expect(503);
      expect(health.body.error).toEqual({ migrations: { status: 'down' } });
      expectStatusesOnly(health.body);
      // Why is in the log, once however often it is probed.
      expect(log.lines.filter((line) => /^migrations is down: /.test(line.msg))).toEqual([
        expect.objectContaining({ context: 'Readiness', msg: 'migrations is down: migrations are pending: run npm run migration:run' }),
      ]);
      await request(t.http).get('/health/live').expect(200);
    } finally {
      await t.db.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [rows[0].id, rows[0].timestamp, rows[0].name]);
    }
    await request(t.http).get('/health/ready').expect(200);
  });

  it('answers a failed check with its status alone, never its error text (a path here), which it logs instead', async () => {
    const root = join(t.config.dataDir, 'objects');
    const moved = `${root}-moved`;
    renameSync(root, moved);
    try {
      for (const path of ['/health/ready', '/health']) {
        const ready = await request(t.http).get(path).expect(503);
        expect(ready.body.error).toEqual({ objectStore: { status: 'down' } });
        expectStatusesOnly(ready.body);
        expect(JSON.stringify(ready.body)).not.toContain(t.config.dataDir);
        expect(ready.text).not.toMatch(/ENOENT|objects/);
      }
    } finally {
      renameSync(moved, root);
    }
    const down = log.lines.filter((line) => /^objectStore is down: /.test(line.msg));
    expect(down).toHaveLength(1);
    expect(down[0]).toMatchObject({ level: 40, msg: expect.stringContaining(`ENOENT: no such file or directory, access '${root}'`) });
    await request(t.http).get('/health/ready').expect(200);
    expect(log.lines.filter((line) => line.msg === 'objectStore is up again')).toHaveLength(1);
  });
});

/** Answers ioredis's ready check (INFO), so the connection is up, then never answers another command. */
const INFO_REPLY = '# Server\r\nloading:0\r\n';

describe('health with a Redis that stops answering once connected', () => {
  let hung: Server;
  const sockets = new Set<Socket>();
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    hung = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        if (/info/i.test(chunk.toString())) socket.write(`$${Buffer.byteLength(INFO_REPLY)}\r\n${INFO_REPLY}\r\n`);
      });
    });
    await new Promise<void>((resolve) => hung.listen(port, '127.0.0.1', resolve));
    t = await createTestApp({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await t.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => hung.close(resolve));
  });

  it('answers 503 naming Redis in under 3 s, while liveness stays 200', async () => {
    for (const path of ['/health/ready', '/health']) {
      const started = Date.now();
      const ready = await request(t.http).get(path).expect(503);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(ready.body.error).toEqual({ redis: { status: 'down' } });
      expect(ready.body.details.database).toEqual({ status: 'up' });
      expectStatusesOnly(ready.body);
      expect(ready.text).not.toContain(String(port));
    }
    await request(t.http).get('/health/live').expect(200);
  });
});
