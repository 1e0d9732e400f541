import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Fault tests stop and restart servers of their own, built from the machine's (Debian's) binaries. CI installs
 * them (`.ci/run`); elsewhere a missing binary skips those tests with a loud message, so `npm test` still runs
 * on a machine that has only Node.
 */
export function findBinary(name: string, candidates: string[]): string | undefined {
  for (const candidate of candidates) if (existsSync(candidate)) return candidate;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const path = join(dir, name);
    if (dir && existsSync(path)) return path;
  }
  return undefined;
}

export function redisServerBinary(): string | undefined {
  return findBinary('redis-server', ['/usr/bin/redis-server']);
}

/** The newest Debian PostgreSQL's bin directory (initdb, pg_ctl, postgres). */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined;
}

/**
 * `describe` when every binary is there; otherwise the block is reported as skipped with the reason, and in CI
 * (CI=true) the run fails instead, because there the binaries must have been installed.
 */
export function describeWithBinaries(what: string, binaries: Record<string, string | undefined>): jest.Describe {
  const missing = Object.entries(binaries)
    .filter(([, path]) => !path)
    .map(([name]) => name);
  if (missing.length === 0) return describe;
  const message = `${what}: ${missing.join(', ')} not found; install them (apt-get install redis-server postgresql) to run these tests`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`SKIPPED ${message}`);
  return describe.skip;
}
