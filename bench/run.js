'use strict';
/**
 * `npm run bench` (after the build): the config-poll benchmark against a bare node:http baseline, for two
 * deployments in turn (the service in memory, then with REDIS_URL pointing at a redis-server of the bench's
 * own), then the 304 poll counted in instructions under callgrind where valgrind is installed
 * (bench/instructions.js), then the storage benchmark, then the change-stream benchmark (bench/streams.js: 5,000 idle streams
 * on one instance, one change pushed to all of them, the poll beside them). Every service, PostgreSQL,
 * Redis and stream client it starts is stopped by PID.
 * The load comes from `wrk` when it is on PATH, else from autocannon (the report says which).
 *
 * Environment:
 *   BENCH_ONLY       `config` (the poll, both deployments), `config:memory`, `config:redis`, `instructions` (the
 *                    poll's 304 counted in instructions under valgrind's callgrind, service and bare), `storage`
 *                    `tenants` (many small organizations polled now and then: database transactions per 1,000 polls,
 *                    bench/tenants.js), `ofrep` (bulk evaluation of 50 flags with 5 rules each against 50 without
 *                    rules, bench/ofrep.js), `large` (one organization of 10,000 flags under its own allowance: the
 *                    poll against bare node:http, the console's flag list against a 50-flag organization,
 *                    bench/large-org.js), `webhooks` (flag PATCHes in an organization with 3 endpoints against one
 *                    without, deliveries flowing to a receiver on loopback: bench/webhooks.js), `storage` or `streams`
 *   BENCH_TENANTS    organizations of the tenants part (default 300), each polled every BENCH_TENANT_POLL_SECONDS
 *                    (default 6) for BENCH_TENANT_SECONDS (default 60) measured
 *   BENCH_CPU_PROF   a directory: each service started writes a V8 CPU profile there when it stops
 *   DATABASE_URL     use that PostgreSQL instead of an embedded one in a temporary DATA_DIR
 *   BENCH_DURATION   seconds of measured load per server and path (default 10)
 *   BENCH_ROUNDS     the config poll's runs per server and path, paired service/bare (default 5: 5 pairs of 2 s)
 *   BENCH_WARMUP     seconds of unmeasured load before each run (default 2; 0 disables)
 *   BENCH_CONNECTIONS  concurrent connections (default 50)
 *   BENCH_STREAMS    streams held open by the change-stream benchmark (default 5000; its targets are for 5000)
 * The server processes are pinned to CPU 0 and the load generator to CPU 1 where `taskset` works.
 * The exit code is 0 whatever the figures (this is a measurement), 1 only when nothing could be measured.
 */
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const { join, resolve } = require('node:path');
const { connect } = require('node:net');
const { runConfigPollBench, formatConfigPollReport, formatVerdicts, loadTool, DEPLOYMENT_TITLES } = require('./config-poll');
const { runStorageBench } = require('./storage');
const { runStreamsBench, formatStreamsReport, planOpenFiles, DEFAULT_STREAMS } = require('./streams');
const { callgrindAvailable, runInstructionsBench, formatInstructionsReport } = require('./instructions');
const { runTenantsBench, formatTenantsReport } = require('./tenants');
const { runOfrepBench, formatOfrepReport } = require('./ofrep');
const { runLargeOrgBench, formatLargeOrgReport, LARGE } = require('./large-org');
const { runWebhooksBench, formatWebhooksReport } = require('./webhooks');
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

/**
 * A redis-server of the bench's own on a free loopback port, no persistence, pinned to the load
 * generator's core (the service keeps its core, as when Redis runs on a machine of its own).
 * Resolves null (with the reason logged) when redis-server is missing or does not start.
 */
async function startRedis({ pin, tmpDir }) {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    log('redis-server is not installed: skipping the REDIS_URL deployment');
    return null;
  }
  const port = await freePort();
  const logFile = join(tmpDir, 'redis.log');
  const logFd = openSync(logFile, 'a');
  const [command, ...args] = [
    ...pin(1),
    'redis-server',
    ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpDir],
  ];
  const child = spawn(command, args, { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    process.kill(child.pid, 'SIGTERM');
    if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) {
      process.kill(child.pid, 'SIGKILL');
      await exited;
    }
  };
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (await redisPing(port)) return { url: `redis://127.0.0.1:${port}`, pid: child.pid, stop };
    await sleep(100);
  }
  log(`redis-server did not answer PING within 10 s: skipping the REDIS_URL deployment\n${tail(logFile)}`);
  await stop();
  return null;
}

function redisPing(port) {
  return new Promise((done) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000, () => socket.destroy());
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => {
      done(chunk.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

/**
 * Starts the built service (embedded PostgreSQL in its own DATA_DIR unless DATABASE_URL is set), pinned
 * to CPU 0, and waits until it is healthy. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of it there on exit.
 * `prefix` goes before the pinning (e.g. `prlimit --nofile=N:N`); like taskset, it must exec the command. `env`: more
 * configuration for this service alone.
 */
async function startService({ name, pin, tmpDir, redisUrl, prefix = [], env: extraEnv = {} }) {
  const dir = mkdtempSync(join(tmpDir, `${name}-`));
  chmodSync(dir, 0o755);
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'service.log');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const adminToken = randomBytes(24).toString('hex');
  // The change-stream bench reads the service's GC and stream figures from /metrics, served on an internal listener.
  const metricsPort = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: baseUrl,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    CONFIG_RATE_LIMIT_PER_MINUTE: '1000000000',
    MAX_UPLOAD_BYTES: '209715200',
    METRICS_PORT: String(metricsPort),
  };
  for (const variable of ['CDN_URL', 'REDIS_URL', 'METRICS_TOKEN']) delete env[variable];
  if (redisUrl) env.REDIS_URL = redisUrl;
  Object.assign(env, extraEnv);
  const entry = join(ROOT, 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run bench\` (it builds first)`);
  const profileDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=service-${name}.cpuprofile`] : [];

  log(
    `${name}: starting the service on ${baseUrl} (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}${redisUrl ? `, REDIS_URL ${redisUrl}` : ''})`,
  );
  const logFd = openSync(logFile, 'a');
  const [command, ...args] = [...prefix, ...pin(0), process.execPath, ...nodeFlags, entry];
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const service = {
    name,
    baseUrl,
    adminToken,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    dataDir,
    logFile,
    pid: child.pid,
    stop: () => stopService(child, dataDir).catch((error) => log(`could not stop the service: ${error.message}`)),
  };
  try {
    await waitForHealth(baseUrl, child, 120_000);
  } catch (error) {
    process.stdout.write(`last lines of the service log:\n${tail(logFile)}\n`);
    await service.stop();
    throw error;
  }
  log(`${name}: service healthy (pid ${child.pid})`);
  return service;
}

const ONLY = ['config', 'config:memory', 'config:redis', 'instructions', 'tenants', 'ofrep', 'large', 'webhooks', 'storage', 'streams'];

async function main() {
  const duration = positiveNumber('BENCH_DURATION', 10);
  const warmup = positiveNumber('BENCH_WARMUP', 2);
  const connections = positiveNumber('BENCH_CONNECTIONS', 50);
  const rounds = Math.floor(positiveNumber('BENCH_ROUNDS', 5));
  if (rounds < 1) throw new Error('BENCH_ROUNDS must be at least 1');
  const streams = Math.floor(positiveNumber('BENCH_STREAMS', DEFAULT_STREAMS));
  if (streams < 1) throw new Error('BENCH_STREAMS must be at least 1');
  const only = process.env.BENCH_ONLY || undefined;
  if (only && !ONLY.includes(only)) throw new Error(`BENCH_ONLY must be one of ${ONLY.join(', ')}`);
  const { pin, note } = cpuPinning();
  const tool = loadTool();
  const tmpDir = mkdtempSync(join(os.tmpdir(), 'flagstore-bench-'));
  // As root, the embedded PostgreSQL runs as `postgres`, which must be able to reach DATA_DIR inside it.
  chmodSync(tmpDir, 0o755);

  const running = new Set();
  let cleanedUp = false;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    for (const stoppable of running) await stoppable.stop();
    rmSync(tmpDir, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  log(`${note}; ${connections} connections, ${duration} s of load per server and path (the poll: in ${rounds} paired runs), ${warmup} s warm-up`);
  log(`load generator: ${tool.description}`);
  const deployments = [];
  if (only === undefined || only === 'config' || only === 'config:memory') deployments.push('memory');
  if (only === undefined || only === 'config' || only === 'config:redis') deployments.push('redis');
  const summaries = {};
  let measured = false;

  /**
   * One part of the bench, measured by `measure` on a service of its own (started with the options `options()`
   * gives): a failure is reported and the next part runs; the service is stopped by PID whatever happens.
   */
  /** What every bench that loads a service is given: the service, the load generator and the run's settings. */
  const underLoad = (service) => ({
    baseUrl: service.baseUrl,
    adminToken: service.adminToken,
    serverPid: service.pid,
    log,
    tmpDir,
    pin,
    tool,
    duration,
    connections,
    warmup,
    rounds,
  });

  const onServiceOfItsOwn = async (title, options, measure) => {
    let service = null;
    try {
      service = await startService(options());
      running.add(service);
      await measure(service);
    } catch (error) {
      process.stdout.write(`\n!!! ${title} BENCHMARK FAILED: ${error.stack || error.message}\n\n`);
      if (service) process.stdout.write(`last lines of the service log:\n${tail(service.logFile)}\n\n`);
    } finally {
      if (service) {
        await service.stop();
        running.delete(service);
      }
    }
  };
  try {
    for (const deployment of deployments) {
      let redis = null;
      let service = null;
      try {
        if (deployment === 'redis') {
          redis = await startRedis({ pin, tmpDir });
          if (!redis) {
            summaries.redis = { skipped: 'redis-server is missing or did not start' };
            continue;
          }
          running.add(redis);
          log(`redis-server ${redis.url} (pid ${redis.pid}, pinned with the load generator)`);
        }
        service = await startService({ name: deployment, pin, tmpDir, redisUrl: redis?.url });
        running.add(service);
        const summary = await runConfigPollBench(underLoad(service));
        measured = true;
        summaries[deployment] = summary;
        process.stdout.write(
          `\n== Config poll, ${DEPLOYMENT_TITLES[deployment]}: GET /v1/flags/config, ${summary.settings.flags} flags, ${summary.servicePayloadBytes} bytes, load by ${tool.name} ==\n`,
        );
        process.stdout.write(`${formatConfigPollReport(summary, deployment)}\n\n`);
      } catch (error) {
        summaries[deployment] = { failed: error.message };
        process.stdout.write(`\n!!! CONFIG-POLL BENCHMARK (${deployment}) FAILED: ${error.message}\n\n`);
      } finally {
        if (service) {
          await service.stop();
          running.delete(service);
        }
        if (redis) {
          await redis.stop();
          running.delete(redis);
        }
      }
    }
    if (deployments.length > 0) process.stdout.write(`${formatVerdicts(summaries, deployments, tool)}\n\n`);

    if (only === undefined || only === 'instructions') {
      process.stdout.write('== Config poll in instructions (valgrind callgrind, event-loop thread, 304 path, in memory) ==\n');
      if (!callgrindAvailable()) {
        process.stdout.write('skipped: valgrind is not installed (`apt-get install valgrind`)\n\n');
      } else {
        try {
          const result = await runInstructionsBench({
            startService: async (options) => {
              const service = await startService(options);
              running.add(service);
              return { ...service, stop: () => service.stop().finally(() => running.delete(service)) };
            },
            tmpDir,
            pin,
            tool,
            log,
          });
          measured = true;
          process.stdout.write(`${formatInstructionsReport(result)}\n\n`);
        } catch (error) {
          process.stdout.write(`\n!!! INSTRUCTIONS BENCHMARK FAILED: ${error.stack || error.message}\n\n`);
        }
      }
    }

    if (only === undefined || only === 'ofrep') {
      await onServiceOfItsOwn(
        'OFREP',
        () => ({ name: 'ofrep', pin, tmpDir }),
        async (service) => {
          const result = await runOfrepBench(underLoad(service));
          measured = true;
          process.stdout.write(
            `\n== OFREP bulk evaluation with targeting: 50 flags x 5 rules against 50 flags without rules (load by ${tool.name}) ==\n`,
          );
          process.stdout.write(`${formatOfrepReport(result)}\n\n`);
        },
      );
    }

    if (only === undefined || only === 'large') {
      await onServiceOfItsOwn(
        'LARGE ORGANIZATION',
        // The list is under the per-key API budget (3,000 a minute): raised as the poll's is, the limiter still counting.
        () => ({ name: 'large', pin, tmpDir, env: { API_RATE_LIMIT_PER_MINUTE: '1000000000' } }),
        async (service) => {
          const result = await runLargeOrgBench(underLoad(service));
          measured = true;
          process.stdout.write(
            `\n== One organization of ${LARGE} flags (its own allowance): the poll and the console's flag list (load by ${tool.name}) ==\n`,
          );
          process.stdout.write(`${formatLargeOrgReport(result)}\n\n`);
        },
      );
    }

    if (only === undefined || only === 'webhooks') {
      await onServiceOfItsOwn(
        'WEBHOOKS',
        // Loopback receivers need the operator's switches; the writers are under the per-user API budget otherwise.
        () => ({
          name: 'webhooks',
          pin,
          tmpDir,
          env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', API_RATE_LIMIT_PER_MINUTE: '1000000000' },
        }),
        async (service) => {
          const result = await runWebhooksBench({
            baseUrl: service.baseUrl,
            adminToken: service.adminToken,
            serverPid: service.pid,
            log,
            duration,
            rounds,
          });
          measured = true;
          process.stdout.write('\n== What webhooks cost the write path: flag PATCHes with 3 endpoints against none (load by the bench itself) ==\n');
          process.stdout.write(`${formatWebhooksReport(result)}\n\n`);
        },
      );
    }

    if (only === undefined || only === 'tenants') {
      await onServiceOfItsOwn(
        'TENANTS',
        () => ({ name: 'tenants', pin, tmpDir }),
        async (service) => {
          const result = await runTenantsBench({
            baseUrl: service.baseUrl,
            adminToken: service.adminToken,
            dataDir: service.dataDir,
            log,
            tenants: Math.floor(positiveNumber('BENCH_TENANTS', 300)),
            periodSeconds: positiveNumber('BENCH_TENANT_POLL_SECONDS', 6),
            seconds: positiveNumber('BENCH_TENANT_SECONDS', 60),
          });
          measured = true;
          process.stdout.write(`== Many small tenants: database work per poll ==\n${formatTenantsReport(result)}\n\n`);
        },
      );
    }

    if (only === undefined || only === 'storage') {
      await onServiceOfItsOwn(
        'STORAGE',
        () => ({ name: 'storage', pin, tmpDir }),
        async (service) => {
          process.stdout.write('== Storage ==\n');
          const result = await runStorageBench({
            baseUrl: service.baseUrl,
            adminToken: service.adminToken,
            serverPid: service.pid,
            log,
            dataDir: service.dataDir,
            tmpDir,
            pin,
          });
          measured = true;
          process.stdout.write(`${typeof result === 'string' ? result : JSON.stringify(result, null, 2)}\n\n`);
        },
      );
    }

    if (only === undefined || only === 'streams') {
      let files = null;
      const streamsService = () => {
        files = planOpenFiles(streams, connections);
        log(files.note);
        if (files.streams < 1) throw new Error('not even one stream fits in the open-file limit');
        return { name: 'streams', pin, tmpDir, prefix: files.prefix };
      };
      await onServiceOfItsOwn('CHANGE-STREAM', streamsService, async (service) => {
        const summary = await runStreamsBench({
          ...underLoad(service),
          metricsUrl: service.metricsUrl,
          streams: files.streams,
          fdPrefix: files.prefix,
        });
        measured = true;
        process.stdout.write(
          `\n== Change stream: ${summary.streams} idle streams on one instance, one change, the poll beside them (load by ${tool.name}) ==\n`,
        );
        process.stdout.write(`${formatStreamsReport(summary, { limitedNote: files.limited ? files.note : undefined })}\n\n`);
      });
    }
  } catch (error) {
    process.stdout.write(`\n!!! ${error.message}\n`);
  } finally {
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
