import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { runningPostmaster } from '../../src/database/embedded-postgres';
import { builtService } from '../support/built-service';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/**
 * README and the docs it links, in the order a reader meets them: README.md, then each docs/ file in the order of
 * README's first link to it, then any docs/ file it does not link (alphabetically).
 */
function documentsInReadingOrder(): Array<{ name: string; text: string }> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const linked = [...readme.matchAll(/\]\(docs\/([a-z0-9-]+\.md)(?:#[^)]*)?\)/g)].map((match) => match[1]);
  const all = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  const order = [...new Set([...linked.filter((name) => all.includes(name)), ...all.sort()])];
  return [
    { name: 'README.md', text: readme },
    ...order.map((name) => ({ name: `docs/${name}`, text: readFileSync(join(ROOT, 'docs', name), 'utf8') })),
  ];
}

/** The blocks marked `<!-- README test: <label> -->`, in reading order: each is the fenced block right after its marker line. */
function markedBlocks(label: string): string[] {
  const blocks: string[] = [];
  const pattern = new RegExp(`<!-- README test: ${label} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  for (const { text } of documentsInReadingOrder()) {
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) blocks.push(match[1]);
  }
  return blocks;
}

function runBash(
  script: string,
  cwd: string,
  env: Record<string, string>,
  timeout: number,
): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd, env, timeout }, (error, out, err) =>
      resolve({ stdout: out, stderr: err, code: error ? ((error as { code?: number }).code ?? 1) : 0 }),
    );
  });
}

/**
 * README's examples, run as written in a fresh shell (bash, `set -euo pipefail`, an empty directory, no variable but
 * PATH, HOME, the ADMIN_TOKEN the first shell exported and the PORT the service listens on): the way a new user
 * follows them. `curl -f` in the blocks turns any error answer into a failed run.
 */
describe('README, followed literally', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'flagstore-readme-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('links every file of docs/ from README, so that no page is left where nobody finds it', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const unlinked = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md') && !readme.includes(`](docs/${name}`));
    expect(unlinked).toEqual([]);
  });

  it('runs First steps, signing in, a promotion, the live event and a canary from a fresh shell, each command answering as the comments say', async () => {
    const blocks = markedBlocks('runs as written');
    expect(blocks).toHaveLength(5);
    const { port } = t.http.address() as { port: number };
    const script = ['set -euo pipefail', ...blocks].join('\n');
    const { stdout, stderr, code } = await runBash(
      script,
      dir,
      { PATH: process.env.PATH ?? '', HOME: dir, ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: String(port) },
      60_000,
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    // curl prints JSON answers without a newline: each check looks for what its command prints.
    expect(stdout).toMatch(/\}304\n/); // the conditional poll
    expect(stdout).toMatch(/"quota":\{"max":5,"used":1,"subscribed":false,"locked":0\}/);
    expect(stdout).toMatch(/hello\n/); // the CDN's copy of the upload
    // The dry-run purge says that it is one, and that nothing went (issue 33).
    expect(stdout).toContain('{"message":"Dry run (dryRun: true): 1 item(s) would be purged; nothing was deleted","purgedCount":1,"dryRun":true}');
    // Targeting: the canary's evaluations, in the order the block runs them.
    expect(stdout).toContain(
      [
        '{"value":true,"reason":"SPLIT","variant":"canary"}',
        '{"value":false,"reason":"DEFAULT","variant":"default"}',
        '{"value":true,"reason":"SPLIT","variant":"canary"}',
        '{"value":true,"reason":"STATIC","variant":"default"}',
      ].join('\n'),
    );
    // Environments: staging's export, with the flag's rules, is the document docs/environments.md shows.
    const environments = readFileSync(join(ROOT, 'docs', 'environments.md'), 'utf8');
    const shown = /The export it prints[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(environments)?.[1];
    expect(shown).toBeDefined();
    expect(stdout).toContain(`${JSON.stringify(JSON.parse(shown!))}\n`);
    expect(JSON.parse(shown!).flags[0].rules).toHaveLength(1);
    // The dry run and the import report the same creation, and production holds staging's flag, rules included.
    expect(stdout.split('{"created":["gems-price"],"updated":[],"unchanged":[],"refused":[]}')).toHaveLength(3);
    const { rows: promoted } = await t.db.query(
      `SELECT f.value, f.rules FROM flags f JOIN organizations o ON o.id = f.organization_id WHERE o.name = 'Acme (production)' AND f.key = 'gems-price'`,
    );
    expect(promoted).toEqual([{ value: 12, rules: JSON.parse(shown!).flags[0].rules }]);
    // People: the flag changed with the session is audited as the user's.
    const { rows: users } = await t.db.query<{ id: string }>(`SELECT id FROM users WHERE email = 'maya@acme.example'`);
    expect(stdout).toContain(`"actorType":"session","actorId":"${users[0].id}"`);
    expect(stdout).toMatch(/"members":\[\{"userId":"[^"]+","email":"maya@acme\.example","name":"Maya Lin","role":"admin"/);

    // What the live event left: the value restored to 2, both schedules pending, the CSV with the three changes.
    const { rows } = await t.db.query<{ value: number }>(`SELECT value FROM flags WHERE key = 'xp-multiplier'`);
    expect(rows).toEqual([{ value: 2 }]);
    const schedules = await t.db.query(`SELECT state FROM flag_schedules WHERE state = 'pending'`);
    expect(schedules.rowCount).toBe(2);
    const csv = readFileSync(join(dir, 'xp.csv'), 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('id,createdAt,action,actorType,actorId,flagId,flagKey,before,after');
    expect(csv).toHaveLength(5); // created, 2, 20, restored to 2
  });
});

/**
 * The console in three commands and its stop, as README writes them, in a shell with job control (as a terminal's):
 * `npm start` is the built service (`npm start` builds first: the same program, without minutes of building in a
 * test), `xdg-open` records the address it is given. On a PORT other than 3000, so that an address that forgets PORT
 * fails; with the embedded PostgreSQL, which the stop must leave stopped.
 */
describe('README, the console in three commands', () => {
  let dir: string;
  const pidFile = () => join(dir, 'service.pid');
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flagstore-readme-start-'));
    chmodSync(dir, 0o711); // as root, PostgreSQL runs as `postgres`, which must enter DATA_DIR (./data here)
  });
  afterAll(async () => {
    // A run that failed half-way may have left the service running: stop it (SIGTERM, so that it stops its PostgreSQL
    // too) by the id the stub recorded, if that process is still the service.
    const pid = existsSync(pidFile()) ? Number(readFileSync(pidFile(), 'utf8')) : NaN;
    const isService = () => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js');
      } catch {
        return false;
      }
    };
    if (Number.isInteger(pid) && isService()) {
      process.kill(pid, 'SIGTERM');
      for (let waited = 0; waited < 20_000 && isService(); waited += 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('starts the service on any PORT, creates the studio, names the console on that PORT, and stops it all with the documented command', async () => {
    const [start, ...others] = markedBlocks('the console in three commands');
    const [stop, ...more] = markedBlocks("stopping the console's service");
    expect([others, more]).toEqual([[], []]);
    expect(start).toContain('npm start &');

    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'npm'),
      `#!/bin/sh\n[ "$1" = start ] || exit 2\necho $$ > ${pidFile()}\nexec ${process.execPath} ${builtService().main}\n`,
      {
        mode: 0o755,
      },
    );
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${join(dir, 'opened')}\n`, { mode: 0o755 });
    const port = await freePort();
    const script = ['set -meuo pipefail', start, 'grep -q . service.pid', stop, 'status=0', 'wait || status=$?', 'echo "stopped: $status"'].join(
      '\n',
    );
    const { stdout, code, stderr } = await runBash(script, dir, { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, PORT: String(port) }, 150_000);

    expect({ code, output: code === 0 ? '' : `${stdout.slice(-3000)}\n${stderr.slice(-3000)}` }).toEqual({ code: 0, output: '' });
    // The admin call reached this PORT: the studio and its first admin, who can sign in.
    expect(stdout).toMatch(/"name":"My studio"/);
    // The boot log (on the shell's terminal) names the console's address beside the API's, on this PORT.
    expect(stdout).toContain(`the console at http://localhost:${port}/console`);
    expect(readFileSync(join(dir, 'opened'), 'utf8').trim()).toBe(`http://localhost:${port}/console`);
    // kill %1 stopped the job: the service exited 0 after its drain, its port is free and its PostgreSQL is stopped.
    expect(stdout).toMatch(/stopped: 0\n$/);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    expect(await runningPostmaster(join(dir, 'data', 'postgres'))).toBeNull();
    rmSync(pidFile());
  }, 180_000);
});
