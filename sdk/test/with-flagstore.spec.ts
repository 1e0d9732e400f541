import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { builtService } from '../../test/support/built-service';

/*
 * scripts/with-flagstore.mjs, the harness every SDK's scenario tests run under (test/fixtures/sdk/SCENARIOS.md), as
 * a process: the service it starts is real (the tests' build of the current sources, FLAGSTORE_SERVICE_MAIN), the
 * command it runs is a small Node program that uses what it was given.
 */

const ROOT = resolve(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'with-flagstore.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((done, fail) => {
    const base = { ...process.env };
    for (const name of ['FLAGSTORE_URL', 'FLAGSTORE_KEY', 'FLAGSTORE_ADMIN_TOKEN', 'DATABASE_URL']) delete base[name];
    const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', fail);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** The command under the harness: reads and writes flags with what it was given, prints it, exits with `code`. */
const PROBE = `
const url = process.env.FLAGSTORE_URL, key = process.env.FLAGSTORE_KEY, admin = process.env.FLAGSTORE_ADMIN_TOKEN;
const auth = (token) => ({ Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' });
(async () => {
  const created = await fetch(url + '/flags', { method: 'POST', headers: auth(key),
    body: JSON.stringify({ key: 'probe', name: 'Probe', type: 'number', value: 3 }) });
  const config = await fetch(url + '/flags/config', { headers: auth(key) });
  const organizations = await fetch(url + '/admin/organizations', { headers: auth(admin) });
  console.log(JSON.stringify({ url, created: created.status, config: config.status, flags: (await config.json()).flags,
    admin: organizations.status }));
  process.exit(Number(process.argv[1]));
})();
`;

describe('scripts/with-flagstore.mjs', () => {
  const main = () => builtService().main;

  it('starts a service with an organization, a subscription and a FLAGS_READ/FLAGS_WRITE key, runs the command, and cleans up', async () => {
    const result = await run([process.execPath, '-e', PROBE, '7'], { FLAGSTORE_SERVICE_MAIN: main() });

    expect(result.code).toBe(7); // the command's status
    const seen = JSON.parse(result.stdout.trim().split('\n').pop()!);
    expect(seen).toMatchObject({ created: 201, config: 200, admin: 200, flags: [{ key: 'probe', type: 'number', value: 3 }] });
    expect(seen.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    // Its log was printed (the command failed), then its folder and its processes went.
    const logFile = /log: (\S+service\.log)/.exec(result.stderr)![1];
    expect(result.stderr).toContain(`exited with 7`);
    expect(result.stderr).toContain('"msg":"SIGTERM received');
    expect(existsSync(dirname(logFile))).toBe(false);
    const pid = Number(/pid (\d+)/.exec(result.stderr)![1]);
    expect(() => process.kill(-pid, 0)).toThrow();
    // The service is gone: its URL answers nothing.
    await expect(fetch(`${seen.url}/flags/config`)).rejects.toThrow();
  });

  it('prints nothing of the log when the command succeeds', async () => {
    const result = await run([process.execPath, '-e', 'process.exit(0)'], { FLAGSTORE_SERVICE_MAIN: main() });

    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('"level"');
  });

  it('with FLAGSTORE_URL and FLAGSTORE_KEY set, runs the command on them and starts nothing', async () => {
    const print = 'console.log([process.env.FLAGSTORE_URL, process.env.FLAGSTORE_KEY, process.env.FLAGSTORE_ADMIN_TOKEN ?? "-"].join(" "))';
    const result = await run([process.execPath, '-e', print], {
      FLAGSTORE_URL: 'http://flags.example.com/v1',
      FLAGSTORE_KEY: 'fsk_given',
      FLAGSTORE_SERVICE_MAIN: '/nonexistent/main.js',
    });

    expect(result).toMatchObject({ code: 0, stdout: 'http://flags.example.com/v1 fsk_given -\n' });
    expect(result.stderr).not.toContain('started the service');
  });

  it('says to build the service when there is no build, and how to call it without a command', async () => {
    const missing = await run([process.execPath, '-e', ''], { FLAGSTORE_SERVICE_MAIN: '/nonexistent/dist/main.js' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/dist/main.js is missing');
    expect(missing.stderr).toContain('npm run build:service');

    const usage = await run([], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: node scripts/with-flagstore.mjs <command> [args...]');
  });

  it('fails with the service log when the service cannot start', async () => {
    // A DATA_DIR is the script's own; an invalid setting the service refuses at start-up is the way to make it fail.
    const result = await run([process.execPath, '-e', 'process.exit(0)'], { FLAGSTORE_SERVICE_MAIN: main(), FLAGSTORE_LOG_LEVEL: 'loud' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('exited (1) before it was healthy');
    expect(result.stderr).toContain('LOG_LEVEL');
  });
});
