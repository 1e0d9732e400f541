'use strict';
/**
 * `npm run bench` (after the build): starts the built service, runs the config-poll benchmark against it
 * and a bare node:http baseline, then the storage benchmark, and stops everything it started.
 *
 * Environment:
 *   BENCH_ONLY       `config` or `storage` to run one part
 *   DATABASE_URL     use that PostgreSQL instead of an embedded one in a temporary DATA_DIR
 *   BENCH_DURATION   seconds per measured run (default 10)
 *   BENCH_WARMUP     seconds of unmeasured load before each run (default 2; 0 disables)
 *   BENCH_CONNECTIONS  concurrent connections (default 50)
 * The server processes are pinned to CPU 0 and the load generator to CPU 1 where `taskset` works.
 * The exit code is 0 whatever the figures (this is a measurement), 1 only when nothing could be measured.
 */
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join, resolve } = require('node:path');
const { runConfigPollBench, formatConfigPollReport } = require('./config-poll');
const { runStorageBench } = require('./storage');
// `npm run bench` builds first, so the service's own helper is there to share.
const { freePort } = require('../dist/common/free-port');

const ROOT = resolve(__dirname, '..');
const log = (message) => process.stdout.write(`[bench] ${message}\n`);

function positiveNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

/** `taskset -c <cpu>` when it exists and the machine has two usable cores; otherwise no pinning. */
function cpuPinning() {
  if (os.cpus().length < 2) return { pin: () => [], note: 'not pinned: fewer than 2 CPUs' };
  const probe = spawnSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return { pin: () => [], note: 'not pinned: taskset is missing or refused' };
  return { pin: (cpu) => ['taskset', '-c', String(cpu)], note: 'servers pinned to CPU 0, load generator to CPU 1' };
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function waitForHealth(baseUrl, service, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.exitCode !== null || service.signalCode !== null) {
      throw new Error(`the service exited (${service.exitCode ?? service.signalCode}) before it was healthy`);
    }
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`GET /health did not answer 200 within ${timeoutMs / 1000} s`);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * SIGTERM, then wait for the exit (the service stops its embedded PostgreSQL on the way out). If it has to
 * be killed, the embedded server it started is stopped through its pid file, so nothing is left running.
 */
async function stopService(service, dataDir) {
  if (service.exitCode === null && service.signalCode === null) {
    const exited = new Promise((done) => service.once('exit', done));
    service.kill('SIGTERM');
    const clean = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
    if (!clean) {
      log('the service did not stop within 30 s of SIGTERM; killing it');
      service.kill('SIGKILL');
      await exited;
    }
  }
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    log(`stopping the embedded PostgreSQL left running (pid ${pid})`);
    process.kill(pid, 'SIGINT');
    for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 200) await sleep(200);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
}

function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function main() {
  const duration = positiveNumber('BENCH_DURATION', 10);
  const warmup = positiveNumber('BENCH_WARMUP', 2);
  const connections = positiveNumber('BENCH_CONNECTIONS', 50);
  const { pin, note } = cpuPinning();
  const tmpDir = mkdtempSync(join(os.tmpdir(), 'flagstore-bench-'));
  // As root, the embedded PostgreSQL runs as `postgres`, which must be able to reach DATA_DIR inside it.
  chmodSync(tmpDir, 0o755);
  const dataDir = join(tmpDir, 'data');
  const logFile = join(tmpDir, 'service.log');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const adminToken = randomBytes(24).toString('hex');

  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: baseUrl,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    CONFIG_RATE_LIMIT_PER_MINUTE: '1000000000',
    MAX_UPLOAD_BYTES: '209715200',
  };
  for (const name of ['CDN_URL', 'REDIS_URL']) delete env[name];
  const entry = join(ROOT, 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run bench\` (it builds first)`);

  log(`${note}; ${connections} connections, ${duration} s per run, ${warmup} s warm-up`);
  log(`starting the service on ${baseUrl} (${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL in ${dataDir}`})`);
  const logFd = openSync(logFile, 'a');
  const [command, ...args] = [...pin(0), process.execPath, entry];
  const service = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);

  let cleanedUp = false;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    await stopService(service, dataDir).catch((error) => log(`could not stop the service: ${error.message}`));
    rmSync(tmpDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  let measured = false;
  try {
    await waitForHealth(baseUrl, service, 120_000);
    log(`service healthy (pid ${service.pid})`);

    const only = process.env.BENCH_ONLY;
    if (only && only !== 'config' && only !== 'storage') throw new Error('BENCH_ONLY must be config or storage');

    if (only !== 'storage') try {
      const summary = await runConfigPollBench({
        baseUrl,
        adminToken,
        serverPid: service.pid,
        log,
        tmpDir,
        pin,
        duration,
        connections,
        warmup,
      });
      measured = true;
      process.stdout.write(`\n== Config poll: GET /v1/flags/config, ${summary.settings.flags} flags, ${summary.servicePayloadBytes} bytes ==\n`);
      process.stdout.write(`${formatConfigPollReport(summary)}\n\n`);
    } catch (error) {
      process.stdout.write(`\n!!! CONFIG-POLL BENCHMARK FAILED: ${error.message}\n\n`);
    }

    if (only !== 'config') {
      try {
        process.stdout.write('== Storage ==\n');
        const result = await runStorageBench({ baseUrl, adminToken, serverPid: service.pid, log, dataDir, tmpDir, pin });
        measured = true;
        process.stdout.write(`${typeof result === 'string' ? result : JSON.stringify(result, null, 2)}\n\n`);
      } catch (error) {
        process.stdout.write(`\n!!! STORAGE BENCHMARK FAILED: ${error.stack || error.message}\n\n`);
      }
    }
  } catch (error) {
    process.stdout.write(`\n!!! ${error.message}\n`);
  } finally {
    if (!measured && existsSync(logFile)) process.stdout.write(`last lines of the service log:\n${tail(logFile)}\n`);
    await cleanup();
  }
  return measured ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error.stack || error}\n`);
    process.exit(1);
  },
);
