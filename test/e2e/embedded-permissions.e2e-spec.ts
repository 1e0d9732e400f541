import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, FSWatcher, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { DatabaseSetupError } from '../../src/database/database-setup-error';
import { assertPostgresCanReach } from '../../src/database/embedded-postgres';
import { logLines, startService, stopService, waitForHealth } from '../support/boot-service';

// As root, PostgreSQL runs as the system user `postgres`: only then can a folder be out of its reach.
const asRoot = process.getuid?.() === 0;
if (!asRoot) {
  console.warn('SKIPPED embedded PostgreSQL folder permissions: these tests need root (PostgreSQL then runs as another user)');
}

const modeOf = (path: string) => statSync(path).mode & 0o7777;

(asRoot ? describe : describe.skip)('the embedded PostgreSQL, started as root', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'flagstore-perm-'));
    chmodSync(root, 0o755);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stops with one message naming a private folder above DATA_DIR and the ways out, changing nothing', async () => {
    const privateFolder = join(root, 'private');
    mkdirSync(privateFolder, { mode: 0o700 });
    chmodSync(privateFolder, 0o700);
    const dataDir = join(privateFolder, 'data');
    const port = await freePort();
    const running = startService({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    const code = await running.exited;
    expect(code).toBe(1);
    // One message, and no folder's mode was touched on the way.
    const errors = logLines(running.output()).filter((line) => line.level >= 50);
    expect(errors).toHaveLength(1);
    const message = errors[0].msg;
    expect(message).toContain(`"postgres" cannot enter the folder ${privateFolder}, on the way to DATA_DIR (${dataDir})`);
    expect(message).toMatch(/run the service as a normal user/);
    expect(message).toMatch(/choose a DATA_DIR and an install location/);
    expect(message).toMatch(/set DATABASE_URL/);
    expect(message).not.toMatch(/Unhandled 'error' event|EACCES|\n\s+at /);
    expect(running.output()).not.toMatch(/Unhandled 'error' event|EACCES|\\n\s+at /);
    expect(modeOf(privateFolder)).toBe(0o700);
    expect(modeOf(root)).toBe(0o755);
    // Nothing was made: no cluster, not even DATA_DIR.
    expect(existsSync(dataDir)).toBe(false);
  });

  it('names a private folder holding the PostgreSQL binaries (the install location)', async () => {
    const install = join(root, 'home', 'checkout', 'native');
    mkdirSync(join(install, 'bin'), { recursive: true });
    mkdirSync(join(install, 'lib'));
    mkdirSync(join(install, 'share'));
    for (const binary of ['initdb', 'postgres']) writeFileSync(join(install, 'bin', binary), '#!/bin/sh\n', { mode: 0o755 });
    chmodSync(join(root, 'home'), 0o700);
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    const user = { name: 'postgres', uid: Number(execFileSync('id', ['-u', 'postgres'])), gid: Number(execFileSync('id', ['-g', 'postgres'])) };
    const binaries = { root: install, initdb: join(install, 'bin', 'initdb'), postgres: join(install, 'bin', 'postgres') };

    const refusal = assertPostgresCanReach(user, binaries, dataDir);
    await expect(refusal).rejects.toThrow(DatabaseSetupError);
    await expect(refusal).rejects.toThrow(`cannot enter the folder ${join(root, 'home')}, on the way to the PostgreSQL binaries (${install})`);
    expect(modeOf(join(root, 'home'))).toBe(0o700);

    // Reachable once the operator opens it (or installs elsewhere); a binary it may not run is named too.
    chmodSync(join(root, 'home'), 0o755);
    await expect(assertPostgresCanReach(user, binaries, dataDir)).resolves.toBeUndefined();
    chmodSync(binaries.postgres, 0o700);
    await expect(assertPostgresCanReach(user, binaries, dataDir)).rejects.toThrow(`cannot run ${binaries.postgres}`);
  });
});

describe('the embedded cluster bootstrap', () => {
  it("creates initdb's password file readable by its user only, and removes it once initdb is done", async () => {
    const root = mkdtempSync(join(tmpdir(), 'flagstore-pwfile-'));
    chmodSync(root, 0o755);
    const temp = join(root, 'tmp');
    const dataDir = join(root, 'data');
    mkdirSync(temp, { mode: 0o777 });
    chmodSync(temp, 0o1777);
    mkdirSync(dataDir, { mode: 0o755 });
    const seen = new Map<string, number>();
    const look = (folder: string) => (_event: string, name: string | Buffer | null) => {
      if (!name) return;
      const path = join(folder, name.toString());
      try {
        const stats = lstatSync(path);
        if (stats.isFile() && !seen.has(path)) seen.set(path, stats.mode & 0o777);
      } catch {
        // already gone
      }
    };
    // Wherever the bootstrap file goes (the temporary folder or DATA_DIR), it is seen while initdb runs.
    const watchers: FSWatcher[] = [watch(temp, look(temp)), watch(dataDir, look(dataDir))];
    const port = await freePort();
    const running = startService({ DATA_DIR: dataDir, TMPDIR: temp, PORT: String(port), HOST: '127.0.0.1' });
    try {
      await waitForHealth(port, running);
    } finally {
      watchers.forEach((watcher) => watcher.close());
      expect(await stopService(running)).toBe(0);
    }
    try {
      // The superuser's own password file stays (0600); the bootstrap copy handed to initdb is transient.
      const transient = [...seen].filter(([path]) => /pass|pw/i.test(path) && !existsSync(path));
      expect(transient.length).toBeGreaterThan(0);
      for (const [path, mode] of transient) expect({ path, mode: mode.toString(8) }).toEqual({ path, mode: '600' });
      expect(seen.get(join(dataDir, 'postgres.password'))?.toString(8)).toBe('600');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
