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
import { assertPostgresCanReach, makeDataDir, postgresSystemUser, SystemUser } from './embedded/run-as-root';
import { forgetOwner, recordOwner } from './embedded/cluster-owner';
import { startPostmaster } from './embedded/postmaster';
import { claimCluster, clusterUse, clusterInUse, runningPostmaster } from './embedded/stale-postmaster';

// The launcher lives here; what it needs for each of its other jobs lives in ./embedded: finding the binaries,
// running as root (another user must reach the folders), initdb, and who may run the cluster (one process: a
// second start refuses, a postmaster whose owner was killed is recovered).
export { assertPostgresCanReach } from './embedded/run-as-root';
export { runningPostmaster } from './embedded/stale-postmaster';

/** Loopback only and no unix socket, so the cluster never collides with a PostgreSQL server already running here. */
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
/** The exit codes of a process ended by these signals, as a shell reports them. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

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
 *
 * The server runs in a process group of its own (postmaster.ts): the process that started it stops it, last, and
 * nothing of it outlives that process. When the process exits without stop() (an error it did not catch), the
 * server gets a fast shutdown on the way out; a SIGINT or SIGTERM before the service installs its own shutdown (at
 * boot, or in the CLI) stops it and exits. Only a SIGKILL leaves it running, for the next start to recover.
 */
export class EmbeddedPostgres {
  private readonly logger = new Logger(EmbeddedPostgres.name);
  private server?: ChildProcess;
  private port?: number;

  constructor(private readonly dataDir: string) {}

  get clusterDir(): string {
    return join(this.dataDir, 'postgres');
  }

  /** Starts the cluster (initialising it on first use), sets up its roles and database, and returns their URLs. */
  async start(): Promise<EmbeddedDatabase> {
    // First, and read-only unless its owner is gone: a cluster another process runs is refused as it is.
    await claimCluster(this.dataDir, this.clusterDir, this.logger);
    // PostgreSQL refuses to run as root; as root, it runs as (and if needed creates) the system user `postgres`.
    const runAs = userInfo().uid === 0 ? await postgresSystemUser() : undefined;
    const binaries = postgresBinaries();
    // Before anything is made: a refusal leaves the disk as it was.
    if (runAs) await assertPostgresCanReach(runAs, binaries, this.dataDir);
    await makeDataDir(this.dataDir, runAs !== undefined);

    const password = await this.password();
    this.port = await freePort();
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
    await this.startServer(binaries.postgres, runAs);

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
   * server that is gone already (killed) is done with at once.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    const child = this.server;
    this.server = undefined;
    this.unhook();
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
  private async startServer(postgres: string, runAs: SystemUser | undefined): Promise<void> {
    try {
      this.server = await startPostmaster({ postgres, clusterDir: this.clusterDir, port: this.port!, flags: POSTGRES_FLAGS, runAs });
    } catch (error) {
      const use = await clusterUse(this.dataDir, this.clusterDir).catch(() => undefined);
      if (use?.kind === 'in-use') throw clusterInUse(this.dataDir, this.clusterDir, use);
      throw error;
    }
    this.hook();
    const pid = await runningPostmaster(this.clusterDir);
    if (pid !== null) await recordOwner(this.dataDir, pid);
  }

  /** A fast shutdown on the way out of a process that exits without stop(): sent now, carried out after. */
  private readonly onExit = () => this.server?.kill('SIGINT');

  /** A signal before anyone else handles it (main.ts replaces these once it serves): stop, then exit as the signal would. */
  private readonly onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    this.logger.log(`${signal} received: stopping the embedded PostgreSQL`);
    void this.stop().finally(() => process.exit(SIGNAL_EXIT_CODES[signal]));
  };

  private hook(): void {
    process.once('exit', this.onExit);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, this.onSignal);
  }

  private unhook(): void {
    process.off('exit', this.onExit);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, this.onSignal);
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
