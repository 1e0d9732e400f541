import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { bearer } from '../factories/organizations.factory';
import { builtService } from '../support/built-service';
import { eventually } from '../support/eventually';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

const ROOT = resolve(__dirname, '..', '..');
const UNKNOWN_ORG = '00000000-0000-4000-8000-000000000000';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON document of a successful call. */
  json: any;
  /** stderr parsed as `{ error: { code, message } }`. */
  error?: { code: string; message: string };
}

/**
 * Runs the CLI built from the current sources as `npm run cli` builds it (built-service.ts: once for every test file that
 * runs the service or the CLI), with the given environment. Each call starts in about a second instead of transpiling
 * the sources through ts-node.
 */
function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ADMIN_TOKEN: undefined, ...env };
  for (const name of Object.keys(childEnv)) if (childEnv[name] === undefined) delete childEnv[name];
  const { cli } = builtService();
  return new Promise((done) => {
    execFile(process.execPath, [cli, ...args], { cwd: ROOT, env: childEnv, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      const parse = (text: string) => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      };
      done({ code, stdout, stderr, json: parse(stdout), error: parse(stderr)?.error });
    });
  });
}

describe('admin CLI', () => {
  let t: TestApp;
  let dataDir: string;
  // The CLI is part of the app's deployment: the same database, and on a shared Redis the same REDIS_PREFIX.
  const cli = (...args: string[]) => runCli(args, { DATABASE_URL: t.databaseUrl, DATA_DIR: dataDir, REDIS_PREFIX: t.config.redisPrefix });

  beforeAll(async () => {
    t = await createTestApp();
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-cli-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates an organization, prints it as JSON, and stores it', async () => {
    const run = await cli('create-org', '--name', 'CLI Studio');
    expect(run.code).toBe(0);
    expect(run.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'CLI Studio',
      storageAllocation: 1024 ** 3,
      createdAt: expect.any(String),
    });
    const { rows } = await t.db.query('SELECT name FROM organizations WHERE id = $1', [run.json.id]);
    expect(rows).toEqual([{ name: 'CLI Studio' }]);

    const allocation = await cli('set-allocation', '--org', run.json.id, '--bytes', '4096');
    expect(allocation.code).toBe(0);
    expect(allocation.json).toMatchObject({ id: run.json.id, storageAllocation: 4096 });
  });

  it('issues a key that the HTTP API accepts, stored only as its hash', async () => {
    const org = (await cli('create-org', '--name', 'Keyed')).json;
    const run = await cli('create-key', '--org', org.id, '--name', 'game-server', '--permissions', 'FLAGS_READ,FLAGS_WRITE');
    expect(run.code).toBe(0);
    expect(run.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'game-server',
      permissions: ['FLAGS_READ', 'FLAGS_WRITE'],
      key: expect.stringMatching(/^fsk_/),
      createdAt: expect.any(String),
    });
    const { rows } = await t.db.query('SELECT key_hash, organization_id, to_jsonb(api_keys)::text AS "wholeRow" FROM api_keys WHERE id = $1', [
      run.json.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toBe(createHash('sha256').update(run.json.key).digest('hex'));
    expect(rows[0].wholeRow).not.toContain(run.json.key.slice('fsk_'.length));
    expect(rows[0].organization_id).toBe(org.id);

    const quota = await request(t.http).get('/v1/flags/quota').set(bearer(run.json.key)).expect(200);
    expect(quota.body).toEqual({ max: 5, used: 0, subscribed: false, locked: 0 });
  });

  it('revokes a key once, then reports it as not found', async () => {
    const org = (await cli('create-org', '--name', 'Revoker')).json;
    const key = (await cli('create-key', '--org', org.id, '--name', 'k', '--permissions', 'FLAGS_READ')).json;
    const revoked = await cli('revoke-key', '--org', org.id, '--key', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({ revoked: key.id });
    const { rows } = await t.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].revoked_at).toBeInstanceOf(Date);

    const again = await cli('revoke-key', '--org', org.id, '--key', key.id);
    expect(again.code).toBe(1);
    expect(again.error?.code).toBe('API_KEY_NOT_FOUND');
  });

  it('a key revoked through the CLI answers 401 on a running service within a second, and from then on', async () => {
    const org = (await cli('create-org', '--name', 'Cached')).json;
    const key = (await cli('create-key', '--org', org.id, '--name', 'k', '--permissions', 'FLAGS_READ')).json;
    await request(t.http).get('/v1/flags/quota').set(bearer(key.key)).expect(200); // now cached by the service
    expect((await cli('revoke-key', '--org', org.id, '--key', key.id)).code).toBe(0);
    // The CLI is another process: its revocation reaches the service's cache by the invalidation bus, which is
    // asynchronous (a request sent the moment the CLI exits may be served first), and well within the second the API
    // promises: the change feed, which would catch a lost message, reads every 3 s.
    const status = async () => (await request(t.http).get('/v1/flags/quota').set(bearer(key.key))).status;
    await eventually(async () => (await status()) === 401, { timeoutMs: 1_000, what: 'the revoked key refused' });
    for (let i = 0; i < 5; i += 1) expect(await status()).toBe(401);
  });

  it('subscribes and unsubscribes', async () => {
    const org = (await cli('create-org', '--name', 'Subscriber')).json;
    const run = await cli('subscribe', '--org', org.id, '--plan', 'pro');
    expect(run.code).toBe(0);
    expect(run.json).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), plan: 'pro', status: 'active', createdAt: expect.any(String) });

    const cancelled = await cli('unsubscribe', '--org', org.id, '--subscription', run.json.id);
    expect(cancelled.code).toBe(0);
    expect(cancelled.json).toEqual({ cancelled: run.json.id });
    const { rows } = await t.db.query('SELECT status FROM subscriptions WHERE id = $1', [run.json.id]);
    expect(rows).toEqual([{ status: 'cancelled' }]);
  });

  it('lists organizations newest first, paged and searched as the admin API does', async () => {
    const prefix = `cli-${Date.now().toString(36)}`;
    const created = [];
    for (const name of [`${prefix} One`, `${prefix} Two`, `${prefix} 100% Three`]) created.push((await cli('create-org', '--name', name)).json);
    const [one, two, three] = created;

    const first = await cli('list-orgs', '--search', prefix.toUpperCase(), '--limit', '2');
    expect(first.code).toBe(0);
    expect(first.json).toEqual({ results: [three, two], total: 3, page: 1, totalPages: 2 });
    const second = await cli('list-orgs', '--search', prefix, '--limit', '2', '--page', '2');
    expect(second.json).toEqual({ results: [one], total: 3, page: 2, totalPages: 2 });
    const literal = await cli('list-orgs', '--search', `${prefix} 100%`);
    expect(literal.json).toEqual({ results: [three], total: 1, page: 1, totalPages: 1 });

    // No flags: the first page of 20, the newest organization first, as GET /v1/admin/organizations answers.
    const all = await cli('list-orgs');
    expect(all.code).toBe(0);
    const api = await request(t.http).get('/v1/admin/organizations').set(bearer(TEST_ADMIN_TOKEN)).expect(200);
    expect(all.json).toEqual(api.body);
    expect(all.json.results[0]).toEqual(three);
  });

  it('shows an organization with its keys and subscriptions, never a key or its hash', async () => {
    const org = (await cli('create-org', '--name', 'Shown')).json;
    const live = (await cli('create-key', '--org', org.id, '--name', 'live', '--permissions', 'FLAGS_READ')).json;
    const revoked = (await cli('create-key', '--org', org.id, '--name', 'gone', '--permissions', 'STORAGE_READ,STORAGE_WRITE')).json;
    await cli('revoke-key', '--org', org.id, '--key', revoked.id);
    const subscription = (await cli('subscribe', '--org', org.id, '--plan', 'pro')).json;

    const run = await cli('show-org', '--org', org.id);
    expect(run.code).toBe(0);
    expect(run.json).toEqual({
      ...org,
      flagAllowance: null,
      flagQuota: { max: 50, used: 0, subscribed: true, locked: 0 },
      apiKeys: [
        { id: live.id, name: 'live', permissions: ['FLAGS_READ'], createdAt: live.createdAt, revokedAt: null },
        { id: revoked.id, name: 'gone', permissions: ['STORAGE_READ', 'STORAGE_WRITE'], createdAt: revoked.createdAt, revokedAt: expect.any(String) },
      ],
      subscriptions: [{ ...subscription, cancelledAt: null }],
    });
    const api = await request(t.http).get(`/v1/admin/organizations/${org.id}`).set(bearer(TEST_ADMIN_TOKEN)).expect(200);
    expect(run.json).toEqual(api.body);
    const { rows } = await t.db.query('SELECT key_hash FROM api_keys WHERE organization_id = $1', [org.id]);
    for (const secret of [live.key, revoked.key, ...rows.map((row) => row.key_hash as string)]) {
      expect(run.stdout).not.toContain(secret);
      expect(run.stdout).not.toContain(secret.slice(-24));
    }
  });

  it('refuses bad read-back flags naming them, and reports an unknown organization as not found', async () => {
    for (const [args, message] of [
      [['--page', '0'], /^page must not be less than 1 \(--page\)$/],
      [['--limit', '101'], /^limit must not be greater than 100 \(--limit\)$/],
      [['--limit', 'ten'], /^limit must be an integer number \(--limit\)$/],
      [['--search', 'x'.repeat(101)], /^search must be shorter than or equal to 100 characters \(--search\)$/],
    ] as const) {
      const run = await cli('list-orgs', ...args);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
    }
    const badUuid = await cli('show-org', '--org', 'not-a-uuid');
    expect(badUuid.error).toEqual({ code: 'VALIDATION_ERROR', message: '--org must be a valid UUID' });
    const missingOrg = await cli('show-org');
    expect(missingOrg.error).toEqual({ code: 'VALIDATION_ERROR', message: '--org is required' });
    const unknown = await cli('show-org', '--org', UNKNOWN_ORG);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.error).toEqual({ code: 'ORGANIZATION_NOT_FOUND', message: `Organization ${UNKNOWN_ORG} not found` });
  });

  it('lists the read-back commands and their optional flags in the usage', async () => {
    const help = await cli('--help');
    expect(help.stdout).toMatch(/^ {2}list-orgs \[--search <text>\] \[--page <n>\] \[--limit <n>\]$/m);
    expect(help.stdout).toMatch(/^ {2}show-org --org <orgId>$/m);
  });

  it('reports a validation error naming the field, on stderr with exit code 1', async () => {
    const org = (await cli('create-org', '--name', 'Validated')).json;
    const badPermission = await cli('create-key', '--org', org.id, '--name', 'k', '--permissions', 'FLAGS_READ,EVERYTHING');
    expect(badPermission.code).toBe(1);
    expect(badPermission.stdout).toBe('');
    expect(badPermission.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/permissions/) });

    const emptyName = await cli('create-org', '--name', '');
    expect(emptyName.code).toBe(1);
    expect(emptyName.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/name/) });

    const badUuid = await cli('subscribe', '--org', 'not-a-uuid', '--plan', 'pro');
    expect(badUuid.code).toBe(1);
    expect(badUuid.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/--org/) });

    const unknownFlag = await cli('create-org', '--name', 'x', '--color', 'red');
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.error?.message).toMatch(/--color/);
  });

  it('reports an unknown organization as not found', async () => {
    const run = await cli('create-key', '--org', UNKNOWN_ORG, '--name', 'orphan-key', '--permissions', 'FLAGS_READ');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.error).toEqual({ code: 'ORGANIZATION_NOT_FOUND', message: expect.stringMatching(/not found/) });
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM api_keys WHERE name = $1', ['orphan-key']);
    expect(rows[0].n).toBe(0);
  });

  it('boots only what the command uses: no object store folder, no signing secret under DATA_DIR', async () => {
    const ownDataDir = mkdtempSync(join(tmpdir(), 'flagstore-cli-lean-'));
    try {
      const run = await runCli(['create-org', '--name', 'Lean'], { DATABASE_URL: t.databaseUrl, DATA_DIR: ownDataDir });
      expect(run.code).toBe(0);
      expect(run.json).toMatchObject({ name: 'Lean' });
      // The storage module (object store, upload signing secret) would have created its files here.
      expect(readdirSync(ownDataDir)).toEqual([]);
    } finally {
      rmSync(ownDataDir, { recursive: true, force: true });
    }
  });

  it('manages people as the admin API does: users, members, roles, an organization with its first admin', async () => {
    const org = (await cli('create-org', '--name', 'People', '--admin-email', 'boss@cli.example', '--admin-name', 'Boss')).error;
    expect(org).toEqual({ code: 'USAGE_ERROR', message: expect.stringMatching(/FLAGSTORE_PASSWORD/) });
    const founded = await runCli(['create-org', '--name', 'People', '--admin-email', 'boss@cli.example', '--admin-name', 'Boss'], {
      DATABASE_URL: t.databaseUrl,
      DATA_DIR: dataDir,
      FLAGSTORE_PASSWORD: 'the boss passphrase',
    });
    expect(founded.code).toBe(0);
    expect(founded.json.admin).toEqual({ id: expect.any(String), email: 'boss@cli.example', name: 'Boss' });
    await request(t.http).post('/v1/auth/login').send({ email: 'boss@cli.example', password: 'the boss passphrase' }).expect(200);

    const badEmail = await cli('create-user', '--email', 'nope', '--name', 'X');
    expect(badEmail.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/email must be an email.*--email/) });
    const user = await cli('create-user', '--email', 'sam@cli.example', '--name', 'Sam');
    expect(user.json).toEqual({ id: expect.any(String), email: 'sam@cli.example', name: 'Sam', createdAt: expect.any(String), emailVerified: true });
    const added = await cli('add-member', '--org', founded.json.id, '--user', user.json.id, '--role', 'editor');
    expect(added.json).toMatchObject({ userId: user.json.id, role: 'editor' });
    const badRole = await cli('set-role', '--org', founded.json.id, '--user', user.json.id, '--role', 'owner');
    expect(badRole.error?.message).toMatch(/role must be one of viewer, editor, admin \(--role\)/);
    expect((await cli('set-role', '--org', founded.json.id, '--user', user.json.id, '--role', 'viewer')).json).toMatchObject({ role: 'viewer' });
    const lastAdmin = await cli('remove-member', '--org', founded.json.id, '--user', founded.json.admin.id);
    expect(lastAdmin.error?.code).toBe('LAST_ADMIN');
    expect((await cli('remove-member', '--org', founded.json.id, '--user', user.json.id)).json).toEqual({
      removed: user.json.id,
      organization: founded.json.id,
    });
    const listed = await cli('list-users', '--search', 'cli.example');
    expect(listed.json.results.map((u: { email: string }) => u.email)).toEqual(['sam@cli.example', 'boss@cli.example']);
    expect((await cli('delete-user', '--user', user.json.id)).json).toEqual({ deleted: user.json.id });
    expect((await cli('delete-user', '--user', user.json.id)).error?.code).toBe('USER_NOT_FOUND');
  });

  it("verifies a user's email (verify-user): the operator vouches for it", async () => {
    const user = await cli('create-user', '--email', 'vera@cli.example', '--name', 'Vera');
    // As a user made through an invitation link is: unverified.
    await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [user.json.id]);
    const verified = await cli('verify-user', '--email', 'Vera@cli.example');
    expect(verified.code).toBe(0);
    expect(verified.json).toEqual({ id: user.json.id, email: 'vera@cli.example', name: 'Vera', createdAt: user.json.createdAt, emailVerified: true });
    const { rows } = await t.db.query('SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1', [user.json.id]);
    expect(rows).toEqual([{ verified: true }]);
    expect((await cli('verify-user', '--email', 'vera@cli.example')).json).toMatchObject({ emailVerified: true }); // again: as it was

    expect((await cli('verify-user', '--email', 'nobody@cli.example')).error).toEqual({
      code: 'USER_NOT_FOUND',
      message: 'email: no user has the email nobody@cli.example',
    });
    expect((await cli('verify-user', '--email', 'nope')).error).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/email must be an email.*--email/),
    });
    expect((await cli('verify-user')).error).toEqual({ code: 'VALIDATION_ERROR', message: '--email is required' });
  });

  it('migrates an up-to-date database as a no-op', async () => {
    const run = await cli('migrate');
    expect(run.code).toBe(0);
    expect(run.json).toEqual({ applied: [] });
  });

  it('refuses, without stopping it, an embedded cluster that a live server owns', async () => {
    const ownDataDir = mkdtempSync(join(tmpdir(), 'flagstore-cli-busy-'));
    const clusterDir = join(ownDataDir, 'postgres');
    mkdirSync(clusterDir);
    // A stand-in for the service's PostgreSQL: a live process whose command line names the cluster.
    const server: ChildProcess = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', clusterDir, 'x/postgres'], {
      stdio: 'ignore',
    });
    try {
      writeFileSync(join(clusterDir, 'postmaster.pid'), `${server.pid}\n${clusterDir}\n`);
      const run = await runCli(['create-org', '--name', 'x'], { DATABASE_URL: undefined, DATA_DIR: ownDataDir });
      expect(run.code).toBe(1);
      expect(run.error?.code).toBe('DATABASE_IN_USE');
      expect(run.error?.message).toMatch(/admin API/);
      expect(server.exitCode).toBeNull();
      expect(() => process.kill(server.pid!, 0)).not.toThrow();
    } finally {
      server.kill('SIGKILL');
      rmSync(ownDataDir, { recursive: true, force: true });
    }
  });
});
