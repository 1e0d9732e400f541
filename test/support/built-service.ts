import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
/** What the build reads: the sources, the migrations and how both are compiled. */
const INPUTS = ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json'];
const PREFIX = 'flagstore-test-build-';
/** A build another process started this long ago and did not finish has died: take it over. */
const STALE_LOCK_MS = 5 * 60_000;
/** Builds not used for this long are removed when a new one is made. */
const UNUSED_MS = 24 * 60 * 60_000;

export interface BuiltService {
  /** dist/main.js, what `npm start` runs. */
  main: string;
  /** dist/cli.js, what `npm run cli` runs. */
  cli: string;
}

let built: BuiltService | undefined;

/**
 * The service built from the current sources as `npm run build` builds it (tsconfig.build.json, then the migrations
 * into dist/migrations), for the tests that run it as a process: once for every process and test file that needs
 * the same sources, instead of transpiling src/ through ts-node in each process started (about 4 s of CPU each).
 *
 * The build is named by a hash of the sources, the compiler settings, the TypeScript version and the checkout, in
 * the temporary folder next to a link to the checkout's node_modules (so that it resolves the same packages); it
 * appears there whole (a rename) or not at all, and one process builds while the others wait for it. Types are not
 * checked here (`--noCheck`, what ts-node's transpile-only did): `npm run typecheck` checks these sources, and
 * the JavaScript emitted is the same.
 */
export function builtService(): BuiltService {
  if (built) return built;
  const dir = join(tmpdir(), `${PREFIX}${sourceHash()}`);
  const result = { main: join(dir, 'dist', 'main.js'), cli: join(dir, 'dist', 'cli.js') };
  const lock = `${dir}.lock`;
  for (;;) {
    if (existsSync(dir)) break;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Another process builds it: wait for it, or take over a build that died.
      if (Date.now() - mtimeOf(lock) > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else sleepSync(100);
      continue;
    }
    try {
      if (!existsSync(dir)) build(dir);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  // Its time is when it was last used: what pruneUnused goes by.
  const now = new Date();
  utimesSync(dir, now, now);
  built = result;
  return built;
}

function build(dir: string): void {
  pruneUnused();
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building);
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(building, 'node_modules'), 'dir');
    // The native compiler (typescript 7), as npm run build:service runs it.
    const tsc = join(ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc');
    const outDir = join(building, 'dist');
    for (const [project, out] of [
      ['tsconfig.build.json', outDir],
      [join('migrations', 'tsconfig.json'), join(outDir, 'migrations')],
    ]) {
      execFileSync(process.execPath, [tsc, '-p', project, '--outDir', out, '--noCheck'], { cwd: ROOT, stdio: 'pipe' });
    }
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
}

/** The content of every input, with where it is and what compiles it: another checkout or version builds apart. */
function sourceHash(): string {
  const hash = createHash('sha256');
  const typescript = JSON.parse(readFileSync(require.resolve('typescript-7/package.json'), 'utf8')) as { version: string };
  hash.update(`${ROOT}\0typescript ${typescript.version}\0`);
  const files = INPUTS.flatMap((input) =>
    statSync(join(ROOT, input)).isDirectory()
      ? readdirSync(join(ROOT, input), { recursive: true, encoding: 'utf8' }).map((file) => join(input, file))
      : [input],
  );
  for (const file of files.sort()) {
    const path = join(ROOT, file);
    if (!statSync(path).isFile()) continue;
    hash.update(`${file}\0`).update(readFileSync(path)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Earlier builds (other sources) that nothing used for a day. */
function pruneUnused(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const path = join(tmpdir(), name);
    if (Date.now() - mtimeOf(path) > UNUSED_MS) rmSync(path, { recursive: true, force: true });
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
