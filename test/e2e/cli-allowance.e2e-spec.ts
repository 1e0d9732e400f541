import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization } from '../factories/organizations.factory';
import { createUser, PASSWORD, signIn } from '../factories/people.factory';
import { builtService } from '../support/built-service';
import { createTestApp, TestApp } from '../support/test-app';

const ROOT = resolve(__dirname, '..', '..');

interface CliRun {
  code: number | null;
  json: any;
  error?: { code: string; message: string };
}

/** The built CLI (as cli.e2e-spec.ts runs it), on the test app's database. */
function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ADMIN_TOKEN: undefined, FLAGSTORE_PASSWORD: undefined, ...env };
  for (const name of Object.keys(childEnv)) if (childEnv[name] === undefined) delete childEnv[name];
  return new Promise((done) => {
    execFile(process.execPath, [builtService().cli, ...args], { cwd: ROOT, env: childEnv, timeout: 60_000 }, (error, stdout, stderr) => {
      const parse = (text: string) => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      };
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, json: parse(stdout), error: parse(stderr)?.error });
    });
  });
}

/** `set-allowance` and `create-org` for an existing user: what the admin API does, from the command line. */
describe('admin CLI: allowances and first admins by email', () => {
  let t: TestApp;
  let dataDir: string;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, { DATABASE_URL: t.databaseUrl, DATA_DIR: dataDir, REDIS_PREFIX: t.config.redisPrefix, ...env });

  beforeAll(async () => {
    t = await createTestApp();
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-cli-allowance-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("set-allowance gives an organization its own allowance, which the running service applies, and `level` gives the level's back", async () => {
    const org = await createOrganization(t);
    for (const key of ['a', 'b', 'c']) await createFlag(t, org.key, { key });

    const lowered = await cli(['set-allowance', '--org', org.id, '--allowance', '2']);
    expect(lowered.code).toBe(0);
    expect(lowered.json).toMatchObject({ id: org.id, flagAllowance: 2, flagQuota: { max: 2, used: 3, subscribed: false, locked: 1 } });
    expect((await api(t, org.key).get('/flags/quota').expect(200)).body).toEqual({ max: 2, used: 3, subscribed: false, locked: 1 });

    const level = await cli(['set-allowance', '--org', org.id, '--allowance', 'level']);
    expect(level.json).toMatchObject({ flagAllowance: null, flagQuota: { max: 5, locked: 0 } });
    const shown = await cli(['show-org', '--org', org.id]);
    expect(shown.json).toMatchObject({ flagAllowance: null, flagQuota: { max: 5, used: 3 } });
  });

  it.each([
    ['0', /flagAllowance must be a whole number from 1 to 10000, or null \(--allowance\)/],
    ['10001', /flagAllowance must be a whole number from 1 to 10000, or null \(--allowance\)/],
    ['2.5', /flagAllowance must be a whole number from 1 to 10000, or null \(--allowance\)/],
    ['lots', /flagAllowance must be an integer number \(--allowance\)/],
  ])('set-allowance refuses --allowance %s naming the flag, before opening the database', async (value, message) => {
    const run = await runCli(['set-allowance', '--org', '00000000-0000-4000-8000-000000000000', '--allowance', value], {});
    expect(run.code).not.toBe(0);
    expect(run.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
  });

  it('set-allowance answers an unknown organization as the admin API does', async () => {
    const run = await cli(['set-allowance', '--org', '00000000-0000-4000-8000-000000000000', '--allowance', '10']);
    expect(run.error).toEqual({ code: 'ORGANIZATION_NOT_FOUND', message: expect.any(String) });
  });

  it('create-org takes an existing user by --admin-email alone, and refuses a password set for them', async () => {
    const user = await createUser(t);
    const refused = await cli(['create-org', '--name', 'Staging', '--admin-email', user.email], { FLAGSTORE_PASSWORD: 'not theirs to set' });
    expect(refused.error).toEqual({ code: 'USAGE_ERROR', message: expect.stringMatching(/keeps their own password: unset FLAGSTORE_PASSWORD/) });

    const created = await cli(['create-org', '--name', 'Staging', '--admin-email', user.email]);
    expect(created.code).toBe(0);
    expect(created.json.admin).toEqual({ id: user.id, email: user.email, name: user.name });
    const session = await signIn(t, user.email, PASSWORD);
    expect(session.body.organizations).toEqual([{ id: created.json.id, name: 'Staging', role: 'admin' }]);
  });

  it('create-org asks a new user for a name and a password', async () => {
    const email = `cli-new-${Date.now()}@studio.example`;
    const noName = await cli(['create-org', '--name', 'New', '--admin-email', email], { FLAGSTORE_PASSWORD: PASSWORD });
    expect(noName.error).toEqual({ code: 'USAGE_ERROR', message: expect.stringMatching(/--admin-name/) });
    const noPassword = await cli(['create-org', '--name', 'New', '--admin-email', email, '--admin-name', 'New Person']);
    expect(noPassword.error).toEqual({ code: 'USAGE_ERROR', message: expect.stringMatching(/set FLAGSTORE_PASSWORD/) });
    const nameAlone = await runCli(['create-org', '--name', 'New', '--admin-name', 'New Person'], {});
    expect(nameAlone.error).toEqual({ code: 'USAGE_ERROR', message: expect.stringMatching(/--admin-name needs --admin-email/) });
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM organizations WHERE name = 'New'`);
    expect(rows[0].n).toBe(0);
  });
});
