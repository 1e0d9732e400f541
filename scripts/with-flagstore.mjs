#!/usr/bin/env node
// Runs a command against a Flagstore service: the SDKs' scenario tests (TypeScript, C++, C#) take the service from
// FLAGSTORE_URL (the base URL, ending in /v1) and FLAGSTORE_KEY (a key with FLAGS_READ and FLAGS_WRITE in an
// organization with a subscription).
//
//   node scripts/with-flagstore.mjs <command> [args...]
//
// With FLAGSTORE_URL and FLAGSTORE_KEY set, it runs the command with the environment as it is. Otherwise it starts a
// service of its own from the built tree (dist/main.js: `npm run build:service`) on a free loopback port, with a
// random ADMIN_TOKEN, on the embedded PostgreSQL in a temporary DATA_DIR (or, when DATABASE_URL is set, on a fresh
// database it creates on that server and drops afterwards), creates an organization with a subscription and a key
// through the admin API, runs the command with FLAGSTORE_URL, FLAGSTORE_KEY and FLAGSTORE_ADMIN_TOKEN added to its
// environment, stops the service (its whole process group) and removes what it made. It exits with the command's
// status. The service's log goes to a file, printed (its end) when something fails.
//
// Plain Node on purpose (no build step, no TypeScript): the native SDKs' test commands run it too.
/* global process, fetch, AbortSignal, URL, setTimeout, clearTimeout -- Node's (eslint.config.mjs gives Node's globals to console/*.mjs only) */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, lstatSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The built service; FLAGSTORE_SERVICE_MAIN names another build of it (the harness's own test uses the tests' build). */
const MAIN = process.env.FLAGSTORE_SERVICE_MAIN ? resolve(process.env.FLAGSTORE_SERVICE_MAIN) : join(ROOT, 'dist', 'main.js');
/** The first start of the embedded PostgreSQL runs initdb: slow on a busy machine. */
const HEALTH_TIMEOUT_MS = Number(process.env.FLAGSTORE_HEALTH_TIMEOUT_MS ?? 180_000);
/** SHUTDOWN_GRACE_SECONDS is 10 by default: after this, the group is killed. */
const STOP_TIMEOUT_MS = 30_000;
/** Lines of the service's log printed when something fails. */
const LOG_TAIL_LINES = 200;
const PREFIX = '[with-flagstore]';

function say(message) {
  process.stderr.write(`${PREFIX} ${message}\n`);
}

class SetupError extends Error {}

/** Runs the command with stdio inherited; resolves with the status to exit with (128 + signal number when killed). */
function runCommand(argv, env, onChild = () => {}) {
  return new Promise((done) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env });
    onChild(child);
    child.once('error', (error) => {
      say(`could not run ${argv[0]}: ${error.message}`);
      done(127);
    });
    child.once('exit', (code, signal) => {
      if (signal) {
        const number = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 1;
        done(128 + number);
      } else done(code ?? 1);
    });
  });
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** The script's own requests leave no idle connection behind: the service's shutdown would wait for it to close. */
const NO_KEEP_ALIVE = { connection: 'close' };

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** The promise's outcome, or `fallback` after `ms` (the timer cleared either way: it must not hold the process). */
function within(promise, ms, fallback) {
  let timer;
  const timeout = new Promise((done) => (timer = setTimeout(() => done(fallback), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function waitForHealth(baseUrl, service) {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.exitCode !== null || service.signalCode !== null) {
      throw new SetupError(`the service exited (${service.exitCode ?? service.signalCode}) before it was healthy`);
    }
    try {
      const response = await fetch(`${baseUrl}/health`, { headers: NO_KEEP_ALIVE, signal: AbortSignal.timeout(5_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new SetupError(`the service was not healthy within ${HEALTH_TIMEOUT_MS / 1000} s (GET ${baseUrl}/health)`);
}

async function adminPost(apiUrl, adminToken, path, body) {
  const response = await fetch(`${apiUrl}/admin${path}`, {
    method: 'POST',
    headers: { ...NO_KEEP_ALIVE, authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 201) throw new SetupError(`POST /v1/admin${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** An organization with a subscription and a key with FLAGS_READ and FLAGS_WRITE: what FLAGSTORE_KEY promises. */
async function provision(apiUrl, adminToken) {
  const organization = await adminPost(apiUrl, adminToken, '/organizations', { name: 'SDK scenarios' });
  await adminPost(apiUrl, adminToken, `/organizations/${organization.id}/subscriptions`, { plan: 'pro' });
  const key = await adminPost(apiUrl, adminToken, `/organizations/${organization.id}/api-keys`, {
    name: 'sdk-scenarios',
    permissions: ['FLAGS_READ', 'FLAGS_WRITE'],
  });
  return key.key;
}

/**
 * Runs one statement on DATABASE_URL's server with `pg` (one of the service's own dependencies), in a node of its own
 * that keeps node_modules' link (see NODE_PRESERVE_SYMLINKS below): pg finds pg-types through it.
 */
function sql(serverUrl, statement) {
  const code =
    "const { Client } = require('pg'); const client = new Client({ connectionString: process.env.SQL_URL });" +
    'client.connect().then(() => client.query(process.env.SQL_STATEMENT)).finally(() => client.end())' +
    '.catch((error) => { console.error(error.message); process.exit(1); });';
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-e', code], {
      cwd: ROOT,
      env: { ...process.env, NODE_PRESERVE_SYMLINKS: '1', SQL_URL: serverUrl, SQL_STATEMENT: statement },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new SetupError(`${statement} on DATABASE_URL's server failed: ${stderr.trim()}`))));
  });
}

function databaseUrlFor(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function isSymlink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function logTail(logFile) {
  try {
    const lines = readFileSync(logFile, 'utf8').split('\n');
    const tail = lines.slice(-LOG_TAIL_LINES - 1).join('\n');
    return lines.length > LOG_TAIL_LINES + 1 ? `(last ${LOG_TAIL_LINES} lines)\n${tail}` : tail;
  } catch (error) {
    return `(no log: ${error.message})`;
  }
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the service's process group (the service and what it started), SIGKILL if it outlives STOP_TIMEOUT_MS. */
async function stopService(service) {
  const exited =
    service.exitCode !== null || service.signalCode !== null ? Promise.resolve() : new Promise((done) => service.once('exit', () => done()));
  try {
    process.kill(-service.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  const stopped = await within(
    exited.then(() => true),
    STOP_TIMEOUT_MS,
    false,
  );
  if (!stopped) say(`the service did not stop within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM: killing its process group`);
  // What it started (the embedded PostgreSQL) may outlive it for a moment.
  for (let waited = 0; groupAlive(service.pid) && waited < 10_000; waited += 100) {
    if (!stopped) break;
    await sleep(100);
  }
  if (groupAlive(service.pid)) {
    try {
      process.kill(-service.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    await exited;
  }
  return { code: service.exitCode, signal: service.signalCode };
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 0) {
    say('usage: node scripts/with-flagstore.mjs <command> [args...]');
    return 2;
  }
  if (process.env.FLAGSTORE_URL && process.env.FLAGSTORE_KEY) {
    say(`using the service at ${process.env.FLAGSTORE_URL} (FLAGSTORE_URL and FLAGSTORE_KEY are set)`);
    return runCommand(argv, process.env);
  }
  if (!existsSync(MAIN)) {
    say(`${MAIN} is missing: build the service first with \`npm run build:service\` (or set FLAGSTORE_URL and FLAGSTORE_KEY for a running one)`);
    return 1;
  }

  const temp = mkdtempSync(join(tmpdir(), 'flagstore-sdk-'));
  // As root, the embedded PostgreSQL runs as the user `postgres`, which must be able to enter the folders on the way to
  // DATA_DIR: mkdtemp's folder is 0700.
  chmodSync(temp, 0o711);
  const logFile = join(temp, 'service.log');
  const adminToken = randomBytes(32).toString('base64url');
  const serverUrl = process.env.DATABASE_URL;
  const database = serverUrl ? `flagstore_sdk_${randomBytes(6).toString('hex')}` : undefined;
  let databaseCreated = false;
  let service;
  let command;
  let status;
  let failed = false;

  let interrupted;
  const onSignal = (signal) => {
    interrupted = signal;
    if (command && command.exitCode === null) command.kill(signal);
    else if (!command) {
      // still setting up: the finally below cleans up once the current step gives up
      say(`${signal} received: stopping`);
      if (service) void stopService(service);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    if (serverUrl) {
      await sql(serverUrl, `CREATE DATABASE ${database}`);
      databaseCreated = true;
    }
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const apiUrl = `${baseUrl}/v1`;
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? temp,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: join(temp, 'data'),
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: process.env.FLAGSTORE_LOG_LEVEL ?? 'info',
      // A node_modules linked in from elsewhere (a shared install, as in a git worktree): packages find each other
      // through the link's path, not the folder it points to (which is not named node_modules).
      ...(isSymlink(join(ROOT, 'node_modules')) ? { NODE_PRESERVE_SYMLINKS: '1' } : {}),
      ...(serverUrl ? { DATABASE_URL: databaseUrlFor(serverUrl, database) } : {}),
    };
    const logFd = openSync(logFile, 'a');
    try {
      service = spawn(process.execPath, [MAIN], { cwd: ROOT, env, stdio: ['ignore', logFd, logFd], detached: true });
    } finally {
      closeSync(logFd);
    }
    say(
      `started the service (pid ${service.pid}) on ${apiUrl}, ${serverUrl ? `database ${database} on DATABASE_URL's server` : 'embedded PostgreSQL'}; log: ${logFile}`,
    );
    await waitForHealth(baseUrl, service);
    if (interrupted) throw new SetupError(`interrupted (${interrupted})`);
    const key = await provision(apiUrl, adminToken);
    if (interrupted) throw new SetupError(`interrupted (${interrupted})`);

    status = await runCommand(
      argv,
      { ...process.env, FLAGSTORE_URL: apiUrl, FLAGSTORE_KEY: key, FLAGSTORE_ADMIN_TOKEN: adminToken },
      (child) => (command = child),
    );
    if (status !== 0) {
      failed = true;
      say(`${argv.join(' ')} exited with ${status}`);
    }
  } catch (error) {
    failed = true;
    status = 1;
    say(error instanceof SetupError ? error.message : `failed: ${error?.stack ?? error}`);
  } finally {
    if (service) {
      const { code, signal } = await stopService(service);
      if (code !== 0 && !failed) {
        say(`the service exited with ${code ?? signal} when stopped`);
        failed = true;
      }
    }
    if (failed && service) say(`the service's log (${logFile}):\n${logTail(logFile)}`);
    if (databaseCreated) {
      try {
        await sql(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } catch (error) {
        say(`could not drop the database ${database}: ${error.message}`);
      }
    }
    rmSync(temp, { recursive: true, force: true });
  }
  return status;
}

process.exitCode = await main();
