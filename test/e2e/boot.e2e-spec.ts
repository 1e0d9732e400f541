import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { runningPostmaster } from '../../src/database/embedded-postgres';
import { logLines, RunningService, startService as start, stopService, waitForHealth } from '../support/boot-service';

/** A bound on a wait, which does not keep the test process alive once the wait is over. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

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

  it('stops with a message naming the port and HOST when the port is in use, its database stopped', async () => {
    const ownDataDir = mkdtempSync(join(tmpdir(), 'flagstore-boot-port-'));
    chmodSync(ownDataDir, 0o711);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const running = start({ DATA_DIR: ownDataDir, PORT: String(port), HOST: '127.0.0.1' });
    try {
      const outcome = await Promise.race([running.exited, pause(60_000).then(() => 'still running')]);
      expect(outcome).toBe(1);
      const refusal = logLines(running.output()).find((line) => line.context === 'Bootstrap' && line.level === 50);
      expect(refusal?.msg).toContain('PORT_IN_USE');
      expect(refusal?.msg).toContain(`HOST=127.0.0.1, PORT=${port}`);
      expect(refusal?.msg).toMatch(/in use by another process/);
      // Nothing is left running behind the failed boot: the embedded PostgreSQL was stopped before the exit.
      expect(await runningPostmaster(join(ownDataDir, 'postgres'))).toBeNull();
    } finally {
      if (running.process.exitCode === null) await stopService(running);
      await new Promise((resolve) => taken.close(resolve));
      rmSync(ownDataDir, { recursive: true, force: true });
    }
  });

  /**
   * One service on a fresh DATA_DIR of its own, without ADMIN_TOKEN, for the three tests below in their order: what it
   * says at boot and answers, a second start on its DATA_DIR while it runs, then its stop and its whole log. Each of
   * them started its own, in the same environment, with an initdb and a boot each.
   */
  describe('a service on a DATA_DIR of its own, without ADMIN_TOKEN', () => {
    let ownDataDir: string;
    let port: number;
    let running: RunningService;

    beforeAll(async () => {
      ownDataDir = mkdtempSync(join(tmpdir(), 'flagstore-boot-own-'));
      chmodSync(ownDataDir, 0o711);
      port = await freePort();
      running = start({ DATA_DIR: ownDataDir, PORT: String(port), HOST: '127.0.0.1' });
      await waitForHealth(port, running);
    });
    afterAll(async () => {
      // Stopped by the last test; here when that one did not run or did not get so far.
      try {
        if (running && running.process.exitCode === null) expect(await stopService(running)).toBe(0);
      } finally {
        rmSync(ownDataDir, { recursive: true, force: true });
      }
    });

    it('says in its boot log that the admin API is off when ADMIN_TOKEN is unset, and its 401 says so', async () => {
      expect(running.output()).toMatch(/ADMIN_TOKEN is not set: the admin API is off and every admin call answers 401/);
      // Where to go next, for the PORT it was given: the API, the console and the docs (issue 33, the first hour).
      expect(logLines(running.output())).toContainEqual(
        expect.objectContaining({
          context: 'Bootstrap',
          msg: `Serving the API at http://localhost:${port}/v1, the console at http://localhost:${port}/console, the docs at http://localhost:${port}/docs`,
        }),
      );
      const refused = await fetch(`http://127.0.0.1:${port}/v1/admin/organizations`, {
        method: 'POST',
        headers: { Authorization: 'Bearer boot-test-admin-token-0123456789abcdef', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Nobody' }),
      });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { message: string }).message).toMatch(/^No admin token is configured/);
    });

    it('refuses a second start on a DATA_DIR whose cluster a live server uses, and touches nothing', async () => {
      const first = running;
      const clusterDir = join(ownDataDir, 'postgres');
      const postmaster = await runningPostmaster(clusterDir);
      expect(postmaster).not.toBeNull();

      const second = start({ DATA_DIR: ownDataDir, PORT: String(await freePort()), HOST: '127.0.0.1' });
      // Today's failure mode is a second server that stops the first one's database and serves: bounded wait.
      const outcome = await Promise.race([second.exited, pause(45_000).then(() => 'still running')]);
      if (outcome === 'still running') await stopService(second);
      expect(outcome).toBe(1);
      // The message names the rule, the cluster and the process that holds it.
      expect(second.output()).toContain('DATABASE_IN_USE');
      expect(second.output()).toContain(clusterDir);
      expect(second.output()).toContain(`pid ${first.process.pid}`);
      expect(second.output()).not.toMatch(/orphaned|Stopping/);

      // The first server's database is the same process, and the first keeps serving.
      expect(await runningPostmaster(clusterDir)).toBe(postmaster);
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      expect(ready.status).toBe(200);
      expect(first.process.exitCode).toBeNull();
    });

    it('writes its boot log as JSON lines, naming only routes that exist', async () => {
      expect(await stopService(running)).toBe(0);
      // Every line, the embedded database's from before the app existed included, is JSON with a time and a level.
      const lines = logLines(running.output());
      expect(lines.every((line) => typeof line.time === 'string' && typeof line.level === 'number')).toBe(true);
      expect(lines).toContainEqual(
        expect.objectContaining({ context: 'Database', msg: expect.stringMatching(/^Embedded PostgreSQL running from /) }),
      );
      // Each path named in braces is a route the app serves, as mapped: /health, not {/v1/health}.
      const mapped = new Set(lines.flatMap((line) => /^Mapped \{([^,]+), [A-Z]+\} route$/.exec(line.msg)?.[1] ?? []));
      expect([...mapped]).toEqual(expect.arrayContaining(['/health', '/health/ready', '/v1/flags', '/v1/flags/:flagId']));
      const named = lines.flatMap((line) => [...line.msg.matchAll(/\{(\/[^,}]*)/g)].map((match) => match[1]));
      expect(named.filter((path) => !mapped.has(path))).toEqual([]);
    });
  });
});
