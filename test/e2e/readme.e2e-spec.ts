import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

/** The blocks README marks as runnable, in order: each is the fenced block right after the marker line. */
function runnableBlocks(readme: string): string[] {
  const blocks: string[] = [];
  const pattern = /<!-- README test: runs as written -->\n```sh\n([\s\S]*?)\n```/g;
  for (let match = pattern.exec(readme); match !== null; match = pattern.exec(readme)) blocks.push(match[1]);
  return blocks;
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

  it('runs First steps, signing in, a promotion, the live event and a canary from a fresh shell, each command answering as the comments say', async () => {
    const blocks = runnableBlocks(readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8'));
    expect(blocks).toHaveLength(5);
    const { port } = t.http.address() as { port: number };
    const script = ['set -euo pipefail', ...blocks].join('\n');
    const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
      execFile(
        'bash',
        ['-c', script],
        { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: String(port) }, timeout: 60_000 },
        (error, out, err) => resolve({ stdout: out, stderr: err, code: error ? ((error as { code?: number }).code ?? 1) : 0 }),
      );
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    // curl prints JSON answers without a newline: each check looks for what its command prints.
    expect(stdout).toMatch(/\}304\n/); // the conditional poll
    expect(stdout).toMatch(/"quota":\{"max":5,"used":1,"subscribed":false,"locked":0\}/);
    expect(stdout).toMatch(/hello\n/); // the CDN's copy of the upload
    expect(stdout).toContain('"purgedCount":1');
    // Targeting: the canary's evaluations, in the order the block runs them.
    expect(stdout).toContain(
      [
        '{"value":true,"reason":"SPLIT","variant":"canary"}',
        '{"value":false,"reason":"DEFAULT","variant":"default"}',
        '{"value":true,"reason":"SPLIT","variant":"canary"}',
        '{"value":true,"reason":"STATIC","variant":"default"}',
      ].join('\n'),
    );
    // Environments: the dry run and the import report the same creation, and production holds staging's flag.
    expect(stdout.split('{"created":["gems-price"],"updated":[],"unchanged":[],"refused":[]}')).toHaveLength(3);
    const { rows: promoted } = await t.db.query(
      `SELECT f.value FROM flags f JOIN organizations o ON o.id = f.organization_id WHERE o.name = 'Acme (production)' AND f.key = 'gems-price'`,
    );
    expect(promoted).toEqual([{ value: 12 }]);
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
