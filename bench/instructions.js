'use strict';
/**
 * The config poll counted in instructions rather than seconds (BENCH_ONLY=instructions). On a shared machine one
 * server's throughput moves by 20 % between runs, more than the gaps the poll's ratios judge; valgrind's
 * callgrind counts the instructions a request costs, and those counts repeat.
 *
 * The service (in memory) and the bare server each run under callgrind with instrumentation off, so that they
 * start and warm up at a usable speed. Then, under the same load: instrumentation on, a short run for valgrind's
 * own translations, counters zeroed, the measured run, a dump. Only the event-loop thread is counted
 * (`--separate-threads`): V8's compiler and GC helper threads run whenever they happen to, and would move
 * the totals by 10 % from one run to the next.
 */
const { spawnSync } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { httpRequest, runLoad, setupFixture, startBareServer, num } = require('./config-poll');

/** Whether valgrind and callgrind_control run here. */
function callgrindAvailable() {
  for (const command of ['valgrind', 'callgrind_control']) {
    const probe = spawnSync(command, ['--version'], { stdio: 'ignore' });
    if (probe.error || probe.status !== 0) return false;
  }
  return true;
}

/**
 * valgrind names its control files after USER and HOST (as `callgrind_control` finds them): both are set
 * here so that the tool and the server agree. HOST is the service's own listening address too, so it is the
 * bench's 127.0.0.1 for both servers.
 */
const CONTROL_ENV = { USER: 'bench', HOST: '127.0.0.1' };

/** The command prefix that runs a server under callgrind, instrumentation off, pinned to CPU 0. */
function underCallgrind({ pin, tmpDir, name }) {
  const outFile = join(tmpDir, `callgrind-${name}.out`);
  const vgdbPrefix = join(tmpDir, `vgdb-${name}`);
  const prefix = [
    ...pin(0),
    'env',
    ...Object.entries(CONTROL_ENV).map(([key, value]) => `${key}=${value}`),
    'valgrind',
    '--quiet',
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    // V8 writes and rewrites its machine code: valgrind must notice, or it runs stale translations.
    '--smc-check=all',
    `--vgdb-prefix=${vgdbPrefix}`,
    `--callgrind-out-file=${outFile}`,
  ];
  return { prefix, outFile, vgdbPrefix };
}

function control(target, pid, ...args) {
  const result = spawnSync('callgrind_control', [`--vgdb-prefix=${target.vgdbPrefix}`, ...args, String(pid)], {
    env: { ...process.env, ...CONTROL_ENV },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} failed: ${(result.stderr || result.stdout || '').trim()}`);
}

/** The instructions the event-loop thread ran between the zeroing and the dump (callgrind's first dump, thread 1). */
function eventLoopInstructions(target) {
  const directory = join(target.outFile, '..');
  const base = target.outFile.slice(directory.length + 1);
  const dump = readdirSync(directory).find((file) => file === `${base}.1-01`);
  if (!dump) throw new Error(`callgrind wrote no dump of the event-loop thread (${base}.1-01)`);
  const totals = readFileSync(join(directory, dump), 'utf8').match(/^totals: (\d+)/m);
  if (!totals) throw new Error(`callgrind's dump ${dump} has no totals`);
  return Number(totals[1]);
}

/**
 * Load on one server, counted: warm-up, instrumentation on, a settling run, zero, the measured run, dump.
 * Resolves with instructions per request.
 */
async function countPerRequest({ target, pid, url, headers, tool, pin, tmpDir, log, name }) {
  const load = (duration) => runLoad({ tool, url, headers, connections: 10, duration, pin, tmpDir });
  log(`instructions, ${name}: warming up under callgrind`);
  await load(30);
  control(target, pid, '--instr=on');
  await load(3);
  control(target, pid, '--zero');
  const measured = await load(10);
  control(target, pid, '--dump');
  control(target, pid, '--instr=off');
  if (measured.responses < 1000) throw new Error(`${name} answered only ${measured.responses} requests under callgrind`);
  const instructions = eventLoopInstructions(target);
  return { requests: measured.responses, instructions, perRequest: instructions / measured.responses };
}

/**
 * Both servers on the 304 path: the service in memory, started by `startService` with the callgrind prefix,
 * then the bare server on the same fixture.
 */
async function runInstructionsBench({ startService, tmpDir, pin, tool, log }) {
  const serviceTarget = underCallgrind({ pin, tmpDir, name: 'service' });
  const service = await startService({ name: 'instructions', pin: () => [], tmpDir, prefix: serviceTarget.prefix });
  let bare = null;
  try {
    const fixture = await setupFixture({ baseUrl: service.baseUrl, adminToken: service.adminToken, log });
    const headers = { Authorization: `Bearer ${fixture.key}`, 'If-None-Match': fixture.etag };
    const check = await httpRequest('GET', `${service.baseUrl}/v1/flags/config`, { headers });
    if (check.status !== 304) throw new Error(`the service answered ${check.status} to a current If-None-Match`);
    const serviceCount = await countPerRequest({
      target: serviceTarget,
      pid: service.pid,
      url: `${service.baseUrl}/v1/flags/config`,
      headers,
      tool,
      pin,
      tmpDir,
      log,
      name: 'service',
    });
    await service.stop();

    const bareTarget = underCallgrind({ pin, tmpDir, name: 'bare' });
    bare = await startBareServer({ fixture, tmpDir, pin: (cpu) => (cpu === 0 ? bareTarget.prefix : pin(cpu)), startTimeoutMs: 60_000 });
    const bareUrl = `http://127.0.0.1:${bare.port}/v1/flags/config`;
    const bareCheck = await httpRequest('GET', bareUrl, { headers });
    if (bareCheck.status !== 304) throw new Error(`the bare server answered ${bareCheck.status} to a current If-None-Match`);
    const bareCount = await countPerRequest({ target: bareTarget, pid: bare.pid, url: bareUrl, headers, tool, pin, tmpDir, log, name: 'bare' });
    return { service: serviceCount, bare: bareCount, ratio: bareCount.perRequest / serviceCount.perRequest };
  } finally {
    await service.stop();
    if (bare) await bare.stop();
  }
}

function formatInstructionsReport(result) {
  const line = (name, count) =>
    `${name.padEnd(8)} ${num(Math.round(count.perRequest)).padStart(8)} instructions per request  (${num(count.requests)} requests counted)`;
  return [
    line('service', result.service),
    line('bare', result.bare),
    `ratio bare/service, 304 path: ${result.ratio.toFixed(2)}  (information: the poll's share of the throughput ratio that CPU work alone decides)`,
  ].join('\n');
}

module.exports = { callgrindAvailable, runInstructionsBench, formatInstructionsReport };
