import { createServer, Server, Socket } from 'node:net';
import request from 'supertest';
import { freePort } from '../../src/common/free-port';
import { createTestApp, TestApp } from '../support/test-app';

describe('health', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
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
      expect(ready.body.error.migrations).toEqual(expect.objectContaining({ status: 'down', message: expect.stringMatching(/pending/) }));
      expect(ready.body.details.database.status).toBe('up');
      const health = await request(t.http).get('/health').expect(503);
      expect(health.body.error.migrations.status).toBe('down');
      await request(t.http).get('/health/live').expect(200);
    } finally {
      await t.db.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [rows[0].id, rows[0].timestamp, rows[0].name]);
    }
    await request(t.http).get('/health/ready').expect(200);
  });
});

/** Answers ioredis's ready check (INFO), so the connection is up, then never answers another command. */
const INFO_REPLY = '# Server\r\nloading:0\r\n';

describe('health with a Redis that stops answering once connected', () => {
  let hung: Server;
  const sockets = new Set<Socket>();
  let t: TestApp;

  beforeAll(async () => {
    const port = await freePort();
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
      expect(ready.body.error.redis.status).toBe('down');
      expect(ready.body.details.database.status).toBe('up');
    }
    await request(t.http).get('/health/live').expect(200);
  });
});
