import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { startService as start, waitForHealth } from '../support/boot-service';

describe('booting the service', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-boot-'));
    chmodSync(dataDir, 0o711); // as root, PostgreSQL runs as `postgres`, which must enter DATA_DIR (mkdtemp makes it 0700)
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://nope' }, 'DATABASE_URL'],
    [{ S3_BUCKET: 'files' }, 'S3_ENDPOINT'],
    // Long enough, but guessable or a placeholder (the compose file's old defaults among them).
    [{ ADMIN_TOKEN: 'a'.repeat(32) }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: 'local-only-admin-token-change-me-0123456789' }, 'ADMIN_TOKEN'],
    [{ UPLOAD_SIGNING_SECRET: 'local-only-upload-signing-secret-change-me' }, 'UPLOAD_SIGNING_SECRET'],
    [{ METRICS_TOKEN: '0123456789'.repeat(4) }, 'METRICS_TOKEN'],
  ])('stops on bad configuration %j with a message naming %s', async (env, variable) => {
    const running = start({ DATA_DIR: dataDir, ...env });
    expect(await running.exited).toBe(1);
    expect(running.output()).toMatch(new RegExp(`Invalid configuration: ${variable} `));
  });

  it('says in its boot log that the admin API is off when ADMIN_TOKEN is unset, and its 401 says so', async () => {
    const ownDataDir = mkdtempSync(join(tmpdir(), 'flagstore-boot-no-admin-'));
    chmodSync(ownDataDir, 0o711);
    const port = await freePort();
    const running = start({ DATA_DIR: ownDataDir, PORT: String(port), HOST: '127.0.0.1' });
    try {
      await waitForHealth(port, running);
      expect(running.output()).toMatch(/ADMIN_TOKEN is not set: the admin API is off and every admin call answers 401/);
      const refused = await fetch(`http://127.0.0.1:${port}/v1/admin/organizations`, {
        method: 'POST',
        headers: { Authorization: 'Bearer boot-test-admin-token-0123456789abcdef', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Nobody' }),
      });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { message: string }).message).toMatch(/^No admin token is configured/);
    } finally {
      running.process.kill('SIGTERM');
      expect(await running.exited).toBe(0);
      rmSync(ownDataDir, { recursive: true, force: true });
    }
  });

  it('serves with an embedded PostgreSQL, reuses it, and recovers after being killed', async () => {
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: 'boot-test-admin-token-0123456789abcdef' };

    const first = start(env);
    await waitForHealth(port, first);
    expect(first.output()).not.toMatch(/admin API is off/);
    const created = await fetch(`http://127.0.0.1:${port}/v1/admin/organizations`, {
      method: 'POST',
      headers: { Authorization: 'Bearer boot-test-admin-token-0123456789abcdef', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Persisted' }),
    });
    expect(created.status).toBe(201);
    const organization = (await created.json()) as { id: string };

    // A SIGKILL leaves the embedded server running with its postmaster.pid.
    first.process.kill('SIGKILL');
    await first.exited;
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(true);

    const second = start(env);
    try {
      await waitForHealth(port, second);
      const reused = await fetch(`http://127.0.0.1:${port}/v1/admin/organizations/${organization.id}`, {
        method: 'PATCH',
        headers: { Authorization: 'Bearer boot-test-admin-token-0123456789abcdef', 'Content-Type': 'application/json' },
        body: JSON.stringify({ storageAllocation: 1 }),
      });
      expect(reused.status).toBe(200);
      expect(second.output()).toMatch(/orphaned PostgreSQL|stale/);
    } finally {
      second.process.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    // A clean shutdown stops the embedded server too.
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });
});
