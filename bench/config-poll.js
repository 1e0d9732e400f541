'use strict';
/**
 * The config-poll benchmark: the service's GET /v1/flags/config against a bare node:http server doing the
 * same auth-map lookup and ETag compare (bench/bare-server.js), on the 304 path and the 200 path.
 *
 * Used by bench/run.js through runConfigPollBench(), once per deployment (in memory, with REDIS_URL). The
 * load comes from `wrk` (one thread, pinned to its own core) when it is on PATH: a C load generator that
 * stays well below one core at the service's rate. Without it, autocannon: run as
 * `node bench/config-poll.js --load '<json>'` this file is that load generator child, one autocannon run
 * with those options and its result as JSON on stdout. autocannon in one Node process saturates near the
 * server's own rate, which pulls every ratio towards 1 (the CPU-per-request ratio is printed for that case).
 */
const { spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { writeFileSync } = require('node:fs');
const http = require('node:http');
const { join } = require('node:path');

const FLAG_COUNT = 50;
const PERMISSIONS = ['FLAGS_READ', 'FLAGS_WRITE'];
const CACHE_CONTROL = 'no-cache, must-revalidate';
/** Ratios to bare node:http in the same run, per deployment; p99 at 50 connections on every path. */
const TARGETS = {
  memory: { ratio304: 0.8, ratio200: 0.8 },
  redis: { ratio304: 0.7 },
  p99Ms: 10,
  rssMb: 200,
};
/** Above this share of the server's core used by anything but the server during a run, the run is suspect. */
const OTHERS_WARNING_PERCENT = 10;
const DEPLOYMENT_TITLES = { memory: 'in memory (one instance)', redis: 'with REDIS_URL' };

/** One HTTP request with the whole response body as a Buffer. */
function httpRequest(method, url, { headers = {}, body } = {}) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        headers: {
          ...headers,
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Like httpRequest, but the status must be the expected one; the JSON body is returned. */
async function call(method, url, expected, options) {
  const response = await httpRequest(method, url, options);
  if (response.status !== expected) {
    throw new Error(`${method} ${url} answered ${response.status} (expected ${expected}): ${response.body.toString().slice(0, 300)}`);
  }
  return response.body.length > 0 ? JSON.parse(response.body.toString()) : undefined;
}

/** Values of every type, a mix of runtimes, some nesting: what a game's config looks like. */
function flagBody(index) {
  const key = `bench_flag_${String(index).padStart(2, '0')}`;
  const runtime = index % 3 === 0 ? 'server' : 'shared';
  switch (index % 4) {
    case 0:
      return { key, name: `Bench flag ${index}`, type: 'boolean', value: index % 8 === 0, runtime };
    case 1:
      return { key, name: `Bench flag ${index}`, type: 'string', value: `variant-${index}-${'x'.repeat(index % 7)}`, runtime };
    case 2:
      return { key, name: `Bench flag ${index}`, type: 'number', value: index * 1.25, runtime };
    default:
      return {
        key,
        name: `Bench flag ${index}`,
        type: 'json',
        value: { tier: `t${index % 5}`, weights: [index, index + 1, index + 2], rollout: { percent: index % 100, regions: ['eu', 'us'] } },
        runtime,
      };
  }
}

/**
 * An organization (subscribed, so that 50 flags fit the allowance), a FLAGS_READ+FLAGS_WRITE key,
 * 50 flags, and the config payload as the service serves it.
 */
async function setupFixture({ baseUrl, adminToken, log }) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const org = await call('POST', `${baseUrl}/v1/admin/organizations`, 201, { headers: admin, body: { name: 'Bench Studio' } });
  await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/subscriptions`, 201, { headers: admin, body: { plan: 'bench' } });
  const key = await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/api-keys`, 201, {
    headers: admin,
    body: { name: 'bench', permissions: PERMISSIONS },
  });
  const auth = { Authorization: `Bearer ${key.key}` };
  const flagIds = {};
  for (let index = 0; index < FLAG_COUNT; index++) {
    const flag = await call('POST', `${baseUrl}/v1/flags`, 201, { headers: auth, body: flagBody(index) });
    flagIds[flag.key] = flag.id;
  }
  const config = await httpRequest('GET', `${baseUrl}/v1/flags/config`, { headers: auth });
  if (config.status !== 200) throw new Error(`GET /v1/flags/config answered ${config.status}: ${config.body.toString().slice(0, 300)}`);
  const etag = config.headers.etag;
  if (!etag || !/^W\/".+"$/.test(etag)) throw new Error(`GET /v1/flags/config sent ETag ${JSON.stringify(etag)}, expected W/"<hash>"`);
  const body = JSON.parse(config.body.toString());
  if (!Array.isArray(body.flags) || body.flags.length !== FLAG_COUNT) {
    throw new Error(`the config payload holds ${body.flags && body.flags.length} flags, expected ${FLAG_COUNT}`);
  }
  log(`fixture: organization ${org.id}, ${FLAG_COUNT} flags, payload ${config.body.length} bytes, ETag ${etag}`);
  return { organizationId: org.id, keyId: key.id, key: key.key, flagIds, etag, payload: config.body, contentType: config.headers['content-type'] };
}

/** Checks one server's answers on both paths before any load, so a broken contract is not measured. */
async function probe(name, url, fixture) {
  const auth = { Authorization: `Bearer ${fixture.key}` };
  const full = await httpRequest('GET', url, { headers: auth });
  const problems = [];
  if (full.status !== 200) problems.push(`200 path answered ${full.status}`);
  if (full.headers.etag !== fixture.etag) problems.push(`ETag ${full.headers.etag} instead of ${fixture.etag}`);
  if (full.headers['cache-control'] !== CACHE_CONTROL) problems.push(`Cache-Control ${full.headers['cache-control']}`);
  for (const form of [fixture.etag, fixture.etag.slice(2), fixture.etag.slice(3, -1), `"nope", ${fixture.etag}`, '*']) {
    const cached = await httpRequest('GET', url, { headers: { ...auth, 'If-None-Match': form } });
    if (cached.status !== 304 || cached.body.length !== 0) problems.push(`If-None-Match ${form} answered ${cached.status}`);
    else if (cached.headers.etag !== fixture.etag || cached.headers['cache-control'] !== CACHE_CONTROL) {
      problems.push(`304 for ${form} lacks ETag or Cache-Control`);
    }
  }
  const anonymous = await httpRequest('GET', url);
  if (anonymous.status !== 401) problems.push(`no key answered ${anonymous.status}`);
  if (problems.length > 0) throw new Error(`${name} does not serve the config contract: ${problems.join('; ')}`);
  return full.body;
}

/** Starts bench/bare-server.js (pinned like the service) serving the fixture. */
function startBareServer({ fixture, tmpDir, pin, startTimeoutMs = 10_000 }) {
  const payloadFile = join(tmpDir, 'config-payload.json');
  const configFile = join(tmpDir, 'bare-server.json');
  writeFileSync(payloadFile, fixture.payload);
  const hash = createHash('sha256').update(fixture.key).digest('hex');
  writeFileSync(
    configFile,
    JSON.stringify({
      port: 0,
      etag: fixture.etag,
      payloadFile,
      keys: { [hash]: { organizationId: fixture.organizationId, keyId: fixture.keyId, permissions: PERMISSIONS } },
    }),
  );
  const [command, ...args] = [...pin(0), process.execPath, join(__dirname, 'bare-server.js'), configFile];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the bare server did not start within ${startTimeoutMs / 1000} s`)), startTimeoutMs);
    child.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const line = output.split('\n')[0];
      if (output.includes('\n')) {
        clearTimeout(timer);
        const { listening } = JSON.parse(line);
        resolve({
          port: listening,
          pid: child.pid,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.removeAllListeners('exit');
              child.once('exit', () => done());
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
            }),
        });
      }
    });
  });
}

/**
 * The load generator: `wrk` when it runs here (override with BENCH_TOOL=autocannon), else autocannon.
 */
function loadTool() {
  const wanted = process.env.BENCH_TOOL;
  if (wanted && wanted !== 'wrk' && wanted !== 'autocannon') throw new Error('BENCH_TOOL must be wrk or autocannon');
  if (wanted !== 'autocannon') {
    const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
    const version = `${probe.stdout || ''}${probe.stderr || ''}`.split('\n')[0].trim();
    if (!probe.error && /^wrk /.test(version)) return { name: 'wrk', description: `${version.split(' [')[0]}, 1 thread` };
    if (wanted === 'wrk') throw new Error('BENCH_TOOL=wrk, but wrk is not on PATH');
  }
  return { name: 'autocannon', description: 'autocannon in one Node process (wrk is not on PATH; `apt-get install wrk` for sharper figures)' };
}

/**
 * One run of the load generator pinned to the load core; resolves with its figures in one shape. GET unless
 * `method` and `body` (a string) say otherwise.
 */
function runLoad({ tool, ...options }) {
  return tool && tool.name === 'wrk' ? runWrk(options) : runAutocannon(options);
}

/** Run by wrk when a run ends: its summary as one JSON line (latencies in microseconds). */
const WRK_DONE_SCRIPT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"durationUs":%d,"requests":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;

function runWrk({ url, headers, connections, duration, pin, tmpDir, method, body }) {
  const script = join(tmpDir, 'wrk-done.lua');
  // A POST's body in a Lua long string, which needs no escaping as long as it holds no ]==].
  const request = method ? `wrk.method = "${method}"\nwrk.body = [==[${body ?? ''}]==]\n` : '';
  writeFileSync(script, `${request}${WRK_DONE_SCRIPT}`);
  const headerArgs = Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${Math.max(1, Math.round(duration))}s`,
    '--latency',
    '--timeout',
    '5s',
    '-s',
    script,
    ...headerArgs,
    url,
  ];
  const [command, ...rest] = [...pin(1), 'wrk', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const text = Buffer.concat(out).toString();
      const line = text.split('\n').find((candidate) => candidate.startsWith('WRK_RESULT '));
      if (code !== 0 || !line) {
        return reject(new Error(`wrk exited with ${code} and no result: ${Buffer.concat(err).toString().trim() || text.trim()}`));
      }
      const raw = JSON.parse(line.slice('WRK_RESULT '.length));
      const seconds = raw.durationUs / 1e6;
      resolve({
        tool: 'wrk',
        durationSec: seconds,
        reqPerSec: raw.requests / seconds,
        p50Ms: raw.p50Us / 1000,
        p99Ms: raw.p99Us / 1000,
        responses: raw.requests,
        bytesPerResponse: raw.requests > 0 ? raw.bytes / raw.requests : 0,
        // wrk counts statuses outside 2xx/3xx only; the 304-or-200 check is on the bytes per response.
        byStatus: undefined,
        unexpectedStatuses: raw.status,
        errors: raw.connect + raw.read + raw.write,
        timeouts: raw.timeout,
      });
    });
  });
}

/** One autocannon run in a child process pinned to the load core. */
function runAutocannon({ url, headers, connections, duration, pin, method, body }) {
  // excludeErrorStats false: the latency of 304s counts too (autocannon otherwise records 2xx only).
  const options = { url, headers, connections, duration, pipelining: 1, excludeErrorStats: false, ...(method ? { method, body } : {}) };
  const [command, ...args] = [...pin(1), process.execPath, __filename, '--load', JSON.stringify(options)];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the load generator exited with ${code}`));
      let result;
      try {
        result = JSON.parse(Buffer.concat(chunks).toString());
      } catch (error) {
        return reject(new Error(`the load generator printed no result: ${error.message}`));
      }
      const byStatus = Object.fromEntries(Object.entries(result.statusCodeStats || {}).map(([status, stat]) => [status, stat.count]));
      const responses = Object.values(byStatus).reduce((sum, count) => sum + count, 0);
      resolve({
        tool: 'autocannon',
        durationSec: result.duration,
        reqPerSec: result.requests.average,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        responses,
        bytesPerResponse: responses > 0 ? result.throughput.total / responses : 0,
        byStatus,
        unexpectedStatuses: undefined,
        errors: result.errors,
        timeouts: result.timeouts,
      });
    });
  });
}

/**
 * What one measured run says, with every response that was not the expected status counted as a failure.
 * With wrk (which counts only statuses outside 2xx/3xx), a 304 run must average fewer bytes per response
 * than the payload and a 200 run at least the payload.
 */
function summarizeRun(result, expectedStatus, payloadBytes) {
  const problems = [];
  let expected = result.responses;
  if (result.byStatus) {
    expected = result.byStatus[expectedStatus] || 0;
    for (const [status, count] of Object.entries(result.byStatus)) {
      if (Number(status) !== expectedStatus) problems.push(`${count} x ${status}`);
    }
  } else {
    if (result.unexpectedStatuses > 0) problems.push(`${result.unexpectedStatuses} non-2xx/3xx`);
    const bodySent = result.bytesPerResponse >= payloadBytes;
    if (expectedStatus === 304 && bodySent) problems.push(`${result.bytesPerResponse.toFixed(0)} bytes per response: not 304s`);
    if (expectedStatus === 200 && !bodySent) problems.push(`${result.bytesPerResponse.toFixed(0)} bytes per response: not the payload`);
    if (problems.length > 0) expected = 0;
  }
  if (result.errors > 0) problems.push(`${result.errors} connection errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  if (result.responses === 0) problems.push(`no ${expectedStatus} at all`);
  return {
    tool: result.tool,
    reqPerSec: result.reqPerSec,
    p99Ms: result.p99Ms,
    p50Ms: result.p50Ms,
    requests: expected,
    responses: result.responses,
    durationSec: result.durationSec,
    valid: problems.length === 0,
    problems,
  };
}

/**
 * The whole config-poll comparison against an already running service.
 *
 * Each path is measured in `rounds` pairs of short runs, the service and the bare server back to back (in
 * alternating order, so that a drift of the machine's speed favours neither), after one warm-up of each. A
 * ratio is the median of the pairs' ratios: a pair shares the machine's state of the moment, which single long
 * runs minutes apart did not (on a shared machine, one server's run alone moved by 10-15 % between runs).
 * @returns the figures per path and server (and per pair), the ratios, the service RSS, and each target's verdict.
 */
async function runConfigPollBench({
  baseUrl,
  adminToken,
  serverPid,
  log,
  tmpDir,
  pin,
  tool,
  duration = 10,
  connections = 50,
  warmup = 2,
  rounds = 5,
  fixture: given,
}) {
  // `fixture`: an organization the caller set up (setupFixture's shape, with `flagCount`), e.g. bench/large-org.js's.
  const fixture = given ?? (await setupFixture({ baseUrl, adminToken, log }));
  const servicePayload = await probe('the service', `${baseUrl}/v1/flags/config`, fixture);
  const bare = await startBareServer({ fixture, tmpDir, pin });
  try {
    const bareUrl = `http://127.0.0.1:${bare.port}/v1/flags/config`;
    const barePayload = await probe('the bare server', bareUrl, fixture);
    if (!barePayload.equals(servicePayload)) log('note: the service rebuilt its payload bytes between polls (generatedAt)');

    const servers = {
      service: { url: `${baseUrl}/v1/flags/config`, pid: serverPid },
      bare: { url: bareUrl, pid: bare.pid },
    };
    const paths = [
      ['304', { 'If-None-Match': fixture.etag }],
      ['200', {}],
    ];
    const roundSeconds = Math.max(1, Math.round(duration / rounds));
    const runs = {};
    for (const [path, extraHeaders] of paths) {
      const headers = { Authorization: `Bearer ${fixture.key}`, ...extraHeaders };
      const load = { tool, headers, connections, pin, tmpDir };
      if (warmup > 0) for (const { url } of Object.values(servers)) await runLoad({ ...load, url, duration: warmup });
      log(`loading the ${path} path: ${rounds} pairs of ${roundSeconds} s runs, ${connections} connections`);
      const pairs = [];
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? ['service', 'bare'] : ['bare', 'service'];
        const pair = {};
        for (const name of order) {
          pair[name] = await measuredRun({
            label: `${name} on the ${path} path, pair ${round + 1}`,
            pid: servers[name].pid,
            expectedStatus: Number(path),
            payloadBytes: servicePayload.length,
            ...{ ...load, url: servers[name].url, duration: roundSeconds, warmup: 0, log },
          });
        }
        pairs.push(pair);
      }
      runs[path] = { service: combineRuns(pairs.map((pair) => pair.service)), bare: combineRuns(pairs.map((pair) => pair.bare)), pairs };
    }
    const rss = processMemory(serverPid);
    const pairRatios = (path) => runs[path].pairs.map((pair) => pair.service.reqPerSec / pair.bare.reqPerSec);
    // Server CPU per request, bare/service: the comparison that still holds when the one-core load
    // generator, not the server, is what caps req/s (both servers then report about the same rate).
    const cpuRatio = (path) => median(runs[path].pairs.map((pair) => pair.bare.cpuMicrosPerRequest / pair.service.cpuMicrosPerRequest));
    const allValid = Object.values(runs).every((byServer) => byServer.service.valid && byServer.bare.valid);
    const p99 = Math.max(runs[304].service.p99Ms, runs[200].service.p99Ms);
    return {
      runs,
      ratios: { 304: median(pairRatios(304)), 200: median(pairRatios(200)) },
      pairRatios: { 304: pairRatios(304), 200: pairRatios(200) },
      cpuRatios: { 304: cpuRatio(304), 200: cpuRatio(200) },
      p99Ms: p99,
      rss,
      servicePayloadBytes: servicePayload.length,
      allValid,
      tool: tool ? tool.name : 'autocannon',
      settings: { connections, duration: roundSeconds * rounds, rounds, roundSeconds, warmup, flags: fixture.flagCount ?? FLAG_COUNT },
    };
  } finally {
    await bare.stop();
  }
}

function median(values) {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * One server's runs on one path as one row: rates and CPU over all of them; p50 and p99 the median of the
 * runs' (a percentile of the whole cannot be had from the runs'), with the worst run's p99 beside it.
 */
function combineRuns(list) {
  const seconds = list.reduce((sum, run) => sum + run.durationSec, 0);
  const responses = list.reduce((sum, run) => sum + run.responses, 0);
  const cpuMicros = list.reduce((sum, run) => sum + run.cpuMicrosPerRequest * run.responses, 0);
  return {
    tool: list[0].tool,
    reqPerSec: list.reduce((sum, run) => sum + run.reqPerSec * run.durationSec, 0) / seconds,
    p50Ms: median(list.map((run) => run.p50Ms)),
    p99Ms: median(list.map((run) => run.p99Ms)),
    worstP99Ms: Math.max(...list.map((run) => run.p99Ms)),
    requests: list.reduce((sum, run) => sum + run.requests, 0),
    responses,
    durationSec: seconds,
    valid: list.every((run) => run.valid),
    problems: list.flatMap((run) => run.problems),
    cpuPercent: list.reduce((sum, run) => sum + run.cpuPercent * run.durationSec, 0) / seconds,
    cpuMicrosPerRequest: responses > 0 ? cpuMicros / responses : Number.NaN,
    othersCpuPercent: Math.max(...list.map((run) => run.othersCpuPercent)),
  };
}

/**
 * One measured run of the load generator against a server process, after `warmup` seconds of unmeasured
 * load: the run's figures (summarizeRun) with the server's CPU and the rest of its core's busy time.
 */
async function measuredRun({
  label,
  pid,
  expectedStatus,
  payloadBytes,
  tool,
  url,
  headers,
  connections,
  duration,
  warmup,
  pin,
  tmpDir,
  log,
  method,
  body,
}) {
  if (warmup > 0) await runLoad({ tool, url, headers, connections, duration: warmup, pin, tmpDir, method, body });
  const cpuBefore = cpuSeconds(pid);
  const core0Before = coreBusySeconds(0);
  const result = await runLoad({ tool, url, headers, connections, duration, pin, tmpDir, method, body });
  const cpuUsed = cpuSeconds(pid) - cpuBefore;
  const othersOnCore0 = coreBusySeconds(0) - core0Before - cpuUsed;
  const run = summarizeRun(result, expectedStatus, payloadBytes);
  run.cpuPercent = (100 * cpuUsed) / run.durationSec;
  run.cpuMicrosPerRequest = run.responses > 0 ? (cpuUsed * 1e6) / run.responses : Number.NaN;
  // The server's core spent on anything else (interrupts, PostgreSQL, another job on the machine).
  run.othersCpuPercent = (100 * othersOnCore0) / run.durationSec;
  if (run.othersCpuPercent > OTHERS_WARNING_PERCENT) {
    log(`!!! ${num(run.othersCpuPercent)}% of the server's core went to other work during this run: rerun when the machine is quiet`);
  }
  if (!run.valid) log(`!!! ${label} answered unexpectedly: ${run.problems.join(', ')}`);
  return run;
}

let clockTicks;
/** User + system CPU time a process has used so far, in seconds (procfs; NaN without it). */
function cpuSeconds(pid) {
  if (clockTicks === undefined) {
    const getconf = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clockTicks = Number(getconf.stdout) > 0 ? Number(getconf.stdout) : 100;
  }
  try {
    const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/**
 * Busy time of one core so far, in seconds, from /proc/stat (user, nice, system, irq, softirq, steal);
 * NaN without it.
 */
function coreBusySeconds(core) {
  if (clockTicks === undefined) cpuSeconds(process.pid);
  try {
    const line = require('node:fs')
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((candidate) => candidate.startsWith(`cpu${core} `));
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/** VmRSS and VmHWM (peak) of a process, in MB, from procfs. */
function processMemory(pid) {
  try {
    const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
      return match ? Number(match[1]) / 1024 : undefined;
    };
    return { rssMb: field('VmRSS'), peakMb: field('VmHWM') };
  } catch {
    return { rssMb: undefined, peakMb: undefined };
  }
}

/** Each target of a deployment with its verdict; a ratio without a target is information only. */
function verdicts(summary, deployment) {
  const targets = TARGETS[deployment] || {};
  const checks = [];
  for (const path of ['304', '200']) {
    const min = targets[`ratio${path}`];
    checks.push({
      label: `ratio service/bare, ${path} path`,
      value: summary.ratios[path],
      text: num(summary.ratios[path], 2),
      target: min === undefined ? undefined : `>= ${min}`,
      ok: min === undefined ? undefined : summary.allValid && summary.ratios[path] >= min,
    });
  }
  checks.push({
    label: 'service p99 (worst path, median of its runs)',
    value: summary.p99Ms,
    text: `${ms(summary.p99Ms, summary.tool)} ms`,
    target: `< ${TARGETS.p99Ms} ms`,
    ok: summary.allValid && summary.p99Ms < TARGETS.p99Ms,
  });
  checks.push({
    label: 'service RSS after the run',
    value: summary.rss.rssMb,
    text: `${num(summary.rss.rssMb, 1)} MB, peak ${num(summary.rss.peakMb, 1)} MB`,
    target: `< ${TARGETS.rssMb} MB`,
    ok: summary.rss.rssMb !== undefined && summary.rss.rssMb < TARGETS.rssMb,
  });
  return checks;
}

const num = (value, digits = 0) => (value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits));
/** autocannon's latency histogram has a resolution of 1 ms; wrk's, of a microsecond. */
const ms = (value, tool) => (value === undefined ? 'n/a' : tool === 'wrk' ? value.toFixed(2) : value < 1 ? '<1' : String(value));
const pass = (ok) => (ok === undefined ? '(information)' : ok ? 'PASS' : 'FAIL');

function formatConfigPollReport(summary, deployment = 'memory') {
  const rows = [['path', 'server', 'req/s', 'p50 ms', 'p99 ms', 'worst p99', 'responses', 'server CPU', 'CPU us/req', 'core 0 other', 'check']];
  for (const path of ['304', '200']) {
    for (const name of ['service', 'bare']) {
      const run = summary.runs[path][name];
      rows.push([
        path,
        name,
        num(run.reqPerSec),
        ms(run.p50Ms, run.tool),
        ms(run.p99Ms, run.tool),
        ms(run.worstP99Ms, run.tool),
        String(run.requests),
        `${num(run.cpuPercent)}%`,
        num(run.cpuMicrosPerRequest, 1),
        `${num(run.othersCpuPercent)}%`,
        run.valid ? 'ok' : `INVALID: ${run.problems.join(', ')}`,
      ]);
    }
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '));
  lines.push('');
  for (const check of verdicts(summary, deployment)) {
    lines.push(`${`${check.label}:`.padEnd(30)} ${check.text}${check.target ? `  (target ${check.target})` : ''}  ${pass(check.ok)}`);
  }
  const generatorBound = ['304', '200'].some((path) => summary.runs[path].bare.cpuPercent < 90 || summary.runs[path].service.cpuPercent < 90);
  for (const path of ['304', '200']) {
    lines.push(`ratio per pair, ${path} path: ${summary.pairRatios[path].map((value) => num(value, 2)).join(' ')}  (the ratio is their median)`);
  }
  lines.push(
    `server CPU per request, bare/service: 304 path ${num(summary.cpuRatios[304], 2)}, 200 path ${num(summary.cpuRatios[200], 2)}  (information)`,
  );
  if (generatorBound) {
    lines.push(
      'note: a server below ~90% CPU was not saturated: the one-core load generator (or another process on the',
      '      machine) capped its req/s, which pulls the req/s ratio towards 1; the CPU-per-request ratio above',
      '      compares the two servers regardless of what capped the load.',
    );
  }
  const disturbed = ['304', '200'].some((path) =>
    ['service', 'bare'].some((name) => summary.runs[path][name].othersCpuPercent > OTHERS_WARNING_PERCENT),
  );
  if (disturbed) {
    lines.push(
      `!!! other work took more than ${OTHERS_WARNING_PERCENT}% of the server's core during a run (column "core 0 other"): rerun on a quiet machine`,
    );
  }
  if (!summary.allValid) lines.push('', '!!! Some runs answered other statuses than expected: the figures above are not a valid measurement.');
  return lines.join('\n');
}

/** The targets of every deployment measured in this run, one line each. */
function formatVerdicts(summaries, deployments, tool) {
  const lines = [`== Config poll targets (ratios to bare node:http in the same run, load by ${tool.name}) ==`];
  for (const deployment of deployments) {
    const summary = summaries[deployment];
    const title = DEPLOYMENT_TITLES[deployment];
    if (!summary || summary.skipped || summary.failed) {
      lines.push(`${title}: not measured (${summary ? summary.skipped || summary.failed : 'no result'})  FAIL`);
      continue;
    }
    for (const check of verdicts(summary, deployment)) {
      lines.push(`${`${title}, ${check.label}:`.padEnd(56)} ${check.text}${check.target ? `  (target ${check.target})` : ''}  ${pass(check.ok)}`);
    }
  }
  return lines.join('\n');
}

/**
 * Paired runs of two loads on the service, alternating which goes first so that drift (a warming cache, the machine's
 * other work) falls on both: each one's figures combined, the second's ratios to the first, and the pairs themselves.
 * A load is measuredRun's options (url, headers, method, body, payloadBytes) over `common`.
 */
async function pairedRuns({ loads, rounds, roundSeconds, warmup, common, serverPid }) {
  const names = Object.keys(loads);
  if (warmup > 0) {
    for (const name of names) {
      await measuredRun({ ...common, ...loads[name], label: `${name} warm-up`, pid: serverPid, expectedStatus: 200, duration: warmup, warmup: 0 });
    }
  }
  const pairs = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    const pair = {};
    for (const name of order) {
      pair[name] = await measuredRun({
        ...common,
        ...loads[name],
        label: `${name}, pair ${round + 1}`,
        pid: serverPid,
        expectedStatus: 200,
        duration: roundSeconds,
        warmup: 0,
      });
    }
    pairs.push(pair);
  }
  const [baseline, measured] = names;
  return {
    [baseline]: combineRuns(pairs.map((pair) => pair[baseline])),
    [measured]: combineRuns(pairs.map((pair) => pair[measured])),
    ratios: pairs.map((pair) => pair[measured].reqPerSec / pair[baseline].reqPerSec),
    ratio: median(pairs.map((pair) => pair[measured].reqPerSec / pair[baseline].reqPerSec)),
    cpuRatio: median(pairs.map((pair) => pair[measured].cpuMicrosPerRequest / pair[baseline].cpuMicrosPerRequest)),
    pairs,
  };
}

module.exports = {
  runConfigPollBench,
  combineRuns,
  median,
  setupFixture,
  flagBody,
  call,
  httpRequest,
  cpuSeconds,
  coreBusySeconds,
  processMemory,
  num,
  ms,
  pass,
  OTHERS_WARNING_PERCENT,
  formatConfigPollReport,
  formatVerdicts,
  loadTool,
  startBareServer,
  probe,
  runLoad,
  measuredRun,
  pairedRuns,
  summarizeRun,
  TARGETS,
  DEPLOYMENT_TITLES,
};

if (require.main === module && process.argv[2] === '--load') {
  const autocannon = require('autocannon');
  const options = JSON.parse(process.argv[3]);
  autocannon(options)
    .then((result) => {
      process.stdout.write(JSON.stringify(result));
    })
    .catch((error) => {
      process.stderr.write(`${error.stack || error}\n`);
      process.exit(1);
    });
}
