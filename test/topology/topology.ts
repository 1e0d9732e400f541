import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findBinary, postgresBinDir, redisServerBinary } from '../support/servers/binaries';

export const REPO = resolve(__dirname, '..', '..');

/* ------------------------------------------------------------------------------------------------------------
 * Binaries: like describeWithBinaries (test/support/servers/binaries.ts), with nginx as well. In CI (CI=true)
 * a missing binary fails the run; elsewhere the suite is skipped with a loud message.
 * ---------------------------------------------------------------------------------------------------------- */

export function nginxBinary(): string | undefined {
  return findBinary('nginx', ['/usr/sbin/nginx']);
}

export function describeWithTopologyBinaries(what: string): jest.Describe {
  const binaries: Record<string, string | undefined> = {
    nginx: nginxBinary(),
    'redis-server': redisServerBinary(),
    'postgresql (/usr/lib/postgresql/*/bin)': postgresBinDir(),
  };
  const missing = Object.entries(binaries)
    .filter(([, path]) => !path)
    .map(([name]) => name);
  if (!existsSync(join(REPO, 'dist', 'main.js'))) missing.push('dist/main.js (run `npm run build`)');
  if (missing.length === 0) return describe;
  const message = `${what}: ${missing.join(', ')} not found; install them (apt-get install nginx redis-server postgresql) to run it`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n\n!!!!!!!! SKIPPED ${message} !!!!!!!!\n\n`);
  return describe.skip;
}

/* ------------------------------------------------------------------------------------------------------------
 * Processes, each with its output in a file, ended by PID.
 * ---------------------------------------------------------------------------------------------------------- */

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
  running(): boolean;
}

export function spawnLogged(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; logFile: string },
): Proc {
  const fd = openSync(options.logFile, 'a');
  const child = spawn(command, args, { cwd: options.cwd ?? REPO, env: options.env ?? process.env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  let done = false;
  const exited = new Promise<number | string>((resolveExit) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolveExit(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      done = true;
      resolveExit(`error: ${error.message}`);
    });
  });
  return { name, child, pid: child.pid, logFile: options.logFile, exited, running: () => !done };
}

/** Sends `signal` to the process by PID and waits up to `timeoutMs` for it to exit; then SIGKILL. */
export async function endProcess(
  proc: Proc | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
  timeoutMs = 15_000,
): Promise<number | string | undefined> {
  if (!proc) return undefined;
  if (!proc.running()) return proc.exited;
  try {
    process.kill(proc.pid, signal);
  } catch {
    return proc.exited;
  }
  const code = await withTimeout(proc.exited, timeoutMs);
  if (code !== undefined) return code;
  try {
    process.kill(proc.pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
  return withTimeout(proc.exited, 5_000);
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolveValue) => {
    const timer = setTimeout(() => resolveValue(undefined), ms);
    promise.then((value) => {
      clearTimeout(timer);
      resolveValue(value);
    });
  });
}

export function tail(file: string, lines = 40): string {
  try {
    const all = readFileSync(file, 'utf8').split('\n');
    return all.slice(-lines - 1).join('\n');
  } catch (error) {
    return `(no log: ${String(error)})`;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

/* ------------------------------------------------------------------------------------------------------------
 * HTTP: a small client that never throws. status 0 is a network error (its text in `error`).
 * ---------------------------------------------------------------------------------------------------------- */

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  error?: string;
  json<T = any>(): T;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string | object;
  agent?: Agent | false;
  timeoutMs?: number;
}

export function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 64 });
}

export function call(baseUrl: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    if (Buffer.isBuffer(options.body)) payload = options.body;
    else if (typeof options.body === 'string') payload = Buffer.from(options.body);
    else {
      payload = Buffer.from(JSON.stringify(options.body));
      headers['Content-Type'] ??= 'application/json';
    }
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolveReply) => {
    let settled = false;
    const settle = (reply: Omit<Reply, 'json'>) => {
      if (settled) return;
      settled = true;
      resolveReply({
        ...reply,
        json: () => JSON.parse(reply.body.toString('utf8')),
      });
    };
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'GET',
        path: `${url.pathname}${url.search}`,
        headers,
        agent: options.agent ?? false,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => settle({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }));
        incoming.on('error', (error) => settle({ status: 0, headers: {}, body: Buffer.alloc(0), error: `response: ${error.message}` }));
      },
    );
    outgoing.setTimeout(options.timeoutMs ?? 15_000, () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs ?? 15_000} ms`)));
    outgoing.on('error', (error) => settle({ status: 0, headers: {}, body: Buffer.alloc(0), error: error.message }));
    outgoing.end(payload);
  });
}

/** Polls `check` until it holds or `timeoutMs` passes; returns how long it took, or undefined. */
export async function within(timeoutMs: number, check: () => Promise<boolean>, intervalMs = 20): Promise<number | undefined> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) return undefined;
    await sleep(intervalMs);
  }
}

/* ------------------------------------------------------------------------------------------------------------
 * Service instances: `node dist/main.js`, as production runs it.
 * ---------------------------------------------------------------------------------------------------------- */

export class Instance {
  proc?: Proc;
  readonly url: string;
  readonly dataDir: string;
  private starts = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    readonly dir: string,
    private readonly env: Record<string, string>,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.dataDir = join(dir, 'data');
    mkdirSync(this.dataDir, { recursive: true });
  }

  get logFile(): string {
    return join(this.dir, 'service.log');
  }

  /** Starts the process and waits until /health answers 200. */
  async start(timeoutMs = 40_000): Promise<void> {
    if (this.proc?.running()) throw new Error(`${this.name} is already running`);
    this.starts += 1;
    writeFileSync(this.logFile, `\n===== ${this.name} start #${this.starts} at ${new Date().toISOString()}\n`, { flag: 'a' });
    const proc = spawnLogged(this.name, process.execPath, ['dist/main.js'], {
      logFile: this.logFile,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...this.env,
        PORT: String(this.port),
        HOST: '127.0.0.1',
        DATA_DIR: this.dataDir,
      },
    });
    this.proc = proc;
    const healthy = await within(
      timeoutMs,
      async () => {
        if (!proc.running()) return true;
        return (await call(this.url, '/health', { timeoutMs: 2_000 })).status === 200;
      },
      100,
    );
    if (!proc.running()) throw new Error(`${this.name} exited with ${await proc.exited} while starting:\n${tail(this.logFile)}`);
    if (healthy === undefined) throw new Error(`${this.name} was not healthy within ${timeoutMs} ms:\n${tail(this.logFile)}`);
  }

  /** SIGTERM, and the exit code (undefined if it had to be killed after `timeoutMs`). */
  async terminate(timeoutMs = 30_000): Promise<number | string | undefined> {
    const proc = this.proc;
    if (!proc || !proc.running()) return proc ? proc.exited : undefined;
    process.kill(proc.pid, 'SIGTERM');
    const code = await withTimeout(proc.exited, timeoutMs);
    if (code === undefined) {
      await endProcess(proc, 'SIGKILL');
      return undefined;
    }
    return code;
  }

  async end(): Promise<void> {
    await endProcess(this.proc, 'SIGTERM', 20_000);
  }

  /** The instance's log from the line `marker` (a string written by `mark`) on. */
  logSince(marker: string): string {
    const log = readFileSync(this.logFile, 'utf8');
    const at = log.lastIndexOf(marker);
    return at === -1 ? log : log.slice(at);
  }

  mark(label: string): string {
    const marker = `===== test: ${label} at ${new Date().toISOString()}`;
    writeFileSync(this.logFile, `${marker}\n`, { flag: 'a' });
    return marker;
  }
}

/** Runs the built CLI's `migrate` against the database, once, before the instances start. */
export function migrate(databaseUrl: string, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  execFileSync(process.execPath, ['dist/cli.js', 'migrate'], {
    cwd: REPO,
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
    stdio: 'pipe',
    timeout: 60_000,
  });
}

/* ------------------------------------------------------------------------------------------------------------
 * nginx, from test/topology/nginx.conf.template.
 * ---------------------------------------------------------------------------------------------------------- */

export interface Nginx {
  url: string;
  port: number;
  dir: string;
  proc: Proc;
  logs(): string;
  /** Where `error.log` or `access.log` ends now, for `logFrom`. */
  logOffset(name: 'error.log' | 'access.log'): number;
  /** What nginx wrote to `error.log` or `access.log` since `offset`. */
  logFrom(name: 'error.log' | 'access.log', offset: number): string;
  close(): Promise<void>;
}

/** nginx on `port` (chosen before the instances start, as their PUBLIC_URL), in front of `upstreamPorts`. */
export async function startNginx(dir: string, port: number, upstreamPorts: number[]): Promise<Nginx> {
  const binary = nginxBinary();
  if (!binary) throw new Error('nginx is not installed');
  mkdirSync(dir, { recursive: true });
  const template = readFileSync(join(__dirname, 'nginx.conf.template'), 'utf8');
  const config = template
    .replace(/\{\{USER\}\}/g, process.getuid?.() === 0 ? 'user root;' : '')
    .replace(/\{\{DIR\}\}/g, dir)
    .replace(/\{\{PORT\}\}/g, String(port))
    .replace(/\{\{SERVERS\}\}/g, upstreamPorts.map((upstream) => `    server 127.0.0.1:${upstream};`).join('\n'));
  const configFile = join(dir, 'nginx.conf');
  writeFileSync(configFile, config);
  const errorLog = join(dir, 'error.log');
  const proc = spawnLogged('nginx', binary, ['-p', dir, '-c', configFile, '-e', errorLog, '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`], {
    logFile: join(dir, 'nginx.out'),
  });
  const url = `http://127.0.0.1:${port}`;
  const logs = () => `nginx output:\n${tail(join(dir, 'nginx.out'), 10)}\nnginx error.log:\n${tail(errorLog, 30)}`;
  const up = await within(15_000, async () => !proc.running() || (await call(url, '/health', { timeoutMs: 2_000 })).status === 200, 100);
  if (!proc.running() || up === undefined) {
    await endProcess(proc, 'SIGTERM');
    throw new Error(`nginx did not start:\n${logs()}`);
  }
  return {
    url,
    port,
    dir,
    proc,
    logs,
    logOffset: (name) => {
      try {
        return statSync(join(dir, name)).size;
      } catch {
        return 0;
      }
    },
    logFrom: (name, offset) => {
      try {
        return readFileSync(join(dir, name)).subarray(offset).toString('utf8');
      } catch {
        return '';
      }
    },
    close: async () => {
      await endProcess(proc, 'SIGTERM', 10_000);
    },
  };
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return dir;
}

export function removeDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
