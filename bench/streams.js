'use strict';
/**
 * The change-stream benchmark: one instance holds 5,000 idle streams (GET /v1/flags/config/stream) of one
 * organization, one PATCH of a flag reaches all of them, and the config poll runs beside them.
 * Reported against the targets:
 *   - the time from just before the PATCH until the last stream has the new event id (median too): <= 1 s;
 *   - the service's RSS growth per 1,000 open streams (VmRSS before opening, and once every stream is open
 *     and has its first event): < 30 MB;
 *   - the poll's req/s (the config-poll load, 304 and 200 paths) with the streams open, as a share of the
 *     same load on the same instance without streams: >= 0.9. The no-stream runs come before the streams are
 *     opened and again after they are closed, and the share is taken of their mean: on a shared machine the
 *     rate drifts, and the two no-stream runs bracket the run with streams (their spread is reported).
 *
 * Used by bench/run.js through runStreamsBench() (`BENCH_ONLY=streams`). A stream needs a key of its own
 * past 20 (the per-key cap on an instance), so 5,000 streams take 250 keys, all of the fixture's
 * organization. The streams are held by a child process pinned to the load generator's core: run as
 * `node bench/streams.js --client`, this file is that child, driven over IPC. It holds each stream on a raw
 * net socket (a request line, the status, then `id:` lines; nothing else of the stream is kept), opens them
 * with bounded concurrency, and sends the PATCH itself, so that the fan-out is timed on one clock.
 */
const { spawn, spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const {
  call,
  httpRequest,
  setupFixture,
  runLoad,
  measuredRun,
  cpuSeconds,
  processMemory,
  num,
  ms,
  pass,
  OTHERS_WARNING_PERCENT,
} = require('./config-poll');

const STREAM_PATH = '/v1/flags/config/stream';
/** The service's cap on open streams per key (MAX_STREAMS_PER_KEY): the 21st is a 429. */
const STREAMS_PER_KEY = 20;
const DEFAULT_STREAMS = 5_000;
const TARGETS = { fanOutMs: 1_000, rssMbPer1000: 30, pollRatio: 0.9 };
/** Streams being opened at once: enough to keep the service busy, few enough for its listen backlog. */
const OPEN_CONCURRENCY = 100;
/** A stream that has no status and first event this long after its connect counts as failed. */
const OPEN_TIMEOUT_MS = 15_000;
/** How long the fan-out is waited for before the streams still without the event count as missed. */
const FAN_OUT_TIMEOUT_MS = 10_000;
/** Admin requests in flight while the keys are created (each takes the organization's row lock anyway). */
const KEY_CONCURRENCY = 8;
/** Descriptors beyond the streams and the poll's connections: PostgreSQL, logs, the runtime's own. */
const FD_HEADROOM = 1_024;
/** The flag the change edits: a number, so that the payload keeps its length (the 304/200 figures stay comparable). */
const CHANGED_FLAG = 'bench_flag_02';

/** The hash of an ETag in any of its forms (W/"h", "h", h): the events' ids are the bare hash. */
function opaqueTag(tag) {
  let value = String(tag).trim();
  if (value.startsWith('W/')) value = value.slice(2);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return value;
}

/** Soft and hard RLIMIT_NOFILE of this process, from procfs (undefined without it). */
function openFileLimits() {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((candidate) => candidate.startsWith('Max open files'));
    const [soft, hard] = line
      .trim()
      .split(/\s+/)
      .slice(3, 5)
      .map((value) => (value === 'unlimited' ? Infinity : Number(value)));
    return { soft, hard };
  } catch {
    return undefined;
  }
}

/**
 * How the service and the stream client get descriptors for `streams` streams. Node raises its soft limit
 * to the hard one at startup, so a hard limit large enough needs nothing; otherwise both are spawned through
 * `prlimit --nofile=N:N` if that is allowed here (root with CAP_SYS_RESOURCE). When it is not, the bench
 * opens as many streams as the hard limit allows and says so: `streams` is then below what was asked.
 * `others`: the connections of the poll's load, held beside the streams.
 */
function planOpenFiles(wanted, others = 0) {
  const needed = wanted + others + FD_HEADROOM;
  const limits = openFileLimits();
  if (!limits) return { prefix: [], streams: wanted, note: 'open-file limit unknown (no /proc/self/limits); trying anyway' };
  if (limits.hard >= needed) {
    return { prefix: [], streams: wanted, note: `open files: the hard limit ${limits.hard} covers ${needed} (Node raises its soft limit to it)` };
  }
  const raise = [`--nofile=${needed}:${needed}`];
  const probe = spawnSync('prlimit', [...raise, 'true'], { encoding: 'utf8' });
  if (!probe.error && probe.status === 0) {
    return {
      prefix: ['prlimit', ...raise],
      streams: wanted,
      note: `open files: raised to ${needed} with prlimit for the service and the stream client`,
    };
  }
  const reason = probe.error ? 'prlimit is missing' : (probe.stderr || '').trim() || `prlimit exited with ${probe.status}`;
  const fit = Math.max(0, Math.floor((limits.hard - others - FD_HEADROOM) / STREAMS_PER_KEY) * STREAMS_PER_KEY);
  return {
    prefix: [],
    streams: Math.min(wanted, fit),
    limited: true,
    note: `!!! open files: the hard limit is ${limits.hard} and could not be raised to ${needed} (${reason}); measuring ${Math.min(wanted, fit)} streams instead of ${wanted}`,
  };
}

/** Runs `work(item)` over `items` with at most `limit` in flight; resolves with the results in order. */
async function mapLimit(items, limit, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** `count` FLAGS_READ keys of the organization, through the admin API. */
async function createStreamKeys({ baseUrl, adminToken, organizationId, count }) {
  const headers = { Authorization: `Bearer ${adminToken}` };
  const indexes = Array.from({ length: count }, (_, index) => index);
  return mapLimit(indexes, KEY_CONCURRENCY, async (index) => {
    const key = await call('POST', `${baseUrl}/v1/admin/organizations/${organizationId}/api-keys`, 201, {
      headers,
      body: { name: `bench-stream-${index}`, permissions: ['FLAGS_READ'] },
    });
    return key.key;
  });
}

/** The stream client child, pinned to the load core; `request(message)` resolves with its answer. */
function startStreamClient({ pin, prefix }) {
  const [command, ...args] = [...prefix, ...pin(1), process.execPath, __filename, '--client'];
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 0;
  let exitError;
  child.on('message', (message) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.error) waiting.reject(new Error(`stream client: ${message.error}`));
    else waiting.resolve(message);
  });
  const failAll = (error) => {
    exitError = error;
    for (const waiting of pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    pending.clear();
  };
  child.once('error', (error) => failAll(error));
  child.once('exit', (code, signal) => failAll(new Error(`the stream client exited (${code ?? signal})`)));
  return {
    pid: child.pid,
    request(message, timeoutMs) {
      if (exitError) return Promise.reject(exitError);
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`the stream client did not answer "${message.type}" within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        pending.set(id, { resolve, reject, timer });
        child.send({ ...message, id });
      });
    },
    /** Asks it to close its streams and exit; SIGKILL by PID if it has not within 5 s. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      if (child.connected) child.send({ type: 'exit' });
      else child.kill('SIGTERM');
      if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/**
 * What the service's /metrics says of its runtime (prom-client's default metrics) and of its open streams:
 * GC seconds so far by kind, the event loop's longest delay since the previous scrape (a scrape resets it),
 * the V8 heap in use, and the stream gauge, read at `metricsUrl` (the service's METRICS_PORT listener). Undefined
 * when it does not answer.
 */
async function serviceMetrics(metricsUrl) {
  let text;
  try {
    const response = await httpRequest('GET', metricsUrl);
    if (response.status !== 200) return undefined;
    text = response.body.toString();
  } catch {
    return undefined;
  }
  const value = (name) => {
    const match = new RegExp(`^${name} ([-+\\d.eE]+)$`, 'm').exec(text);
    return match ? Number(match[1]) : Number.NaN;
  };
  const gcSeconds = {};
  for (const match of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([-+\d.eE]+)$/gm)) gcSeconds[match[1]] = Number(match[2]);
  return {
    gcSeconds,
    lagMaxMs: value('nodejs_eventloop_lag_max_seconds') * 1000,
    heapUsedMb: value('nodejs_heap_size_used_bytes') / (1024 * 1024),
    streams: value('flagstore_stream_connections'),
  };
}

/** GC milliseconds between two scrapes: all kinds, and the major (mark-compact) share. */
function gcBetween(before, after) {
  if (!before || !after) return { totalMs: Number.NaN, majorMs: Number.NaN };
  const delta = (kind) => ((after.gcSeconds[kind] || 0) - (before.gcSeconds[kind] || 0)) * 1000;
  const kinds = new Set([...Object.keys(before.gcSeconds), ...Object.keys(after.gcSeconds)]);
  return { totalMs: [...kinds].reduce((sum, kind) => sum + delta(kind), 0), majorMs: delta('major') };
}

/**
 * The whole benchmark against an already running service (started with a high CONFIG_RATE_LIMIT_PER_MINUTE,
 * as the poll's load and 20 opens per key count against it, and with descriptors for the streams).
 */
async function runStreamsBench({
  baseUrl,
  adminToken,
  metricsUrl,
  serverPid,
  log,
  tmpDir,
  pin,
  tool,
  duration,
  connections,
  warmup,
  streams,
  fdPrefix = [],
}) {
  const fixture = await setupFixture({ baseUrl, adminToken, log });
  const keyCount = Math.ceil(streams / STREAMS_PER_KEY);
  const keysStarted = Date.now();
  const keys = await createStreamKeys({ baseUrl, adminToken, organizationId: fixture.organizationId, count: keyCount });
  log(`streams: ${keyCount} FLAGS_READ keys created in ${((Date.now() - keysStarted) / 1000).toFixed(1)} s`);

  const configUrl = `${baseUrl}/v1/flags/config`;
  const auth = { Authorization: `Bearer ${fixture.key}` };
  // Each run with the service's GC time and longest event-loop delay over the measured part (the warm-up
  // comes first, then a scrape that resets the delay's maximum).
  const pollRuns = async (when, etag) => {
    const runs = {};
    for (const [path, extra] of [
      ['304', { 'If-None-Match': etag }],
      ['200', {}],
    ]) {
      const load = { tool, url: configUrl, headers: { ...auth, ...extra }, connections, pin, tmpDir };
      if (warmup > 0) await runLoad({ ...load, duration: warmup });
      const before = await serviceMetrics(metricsUrl);
      const run = await measuredRun({
        label: `the service on the ${path} path, ${when}`,
        pid: serverPid,
        expectedStatus: Number(path),
        payloadBytes: fixture.payload.length,
        ...{ ...load, duration, warmup: 0, log },
      });
      const after = await serviceMetrics(metricsUrl);
      run.gc = gcBetween(before, after);
      run.lagMaxMs = after ? after.lagMaxMs : Number.NaN;
      runs[path] = run;
    }
    return runs;
  };
  const without = await pollRuns('no streams', fixture.etag);

  const { port, hostname } = new URL(baseUrl);
  const client = startStreamClient({ pin, prefix: fdPrefix });
  try {
    const rssBefore = processMemory(serverPid);
    const metricsBefore = await serviceMetrics(metricsUrl);
    const cpuBefore = cpuSeconds(serverPid);
    log(`streams: opening ${streams} streams (${keyCount} keys x ${STREAMS_PER_KEY}, ${OPEN_CONCURRENCY} at a time)`);
    const opened = await client.request(
      { type: 'open', host: hostname, port: Number(port), path: STREAM_PATH, keys, perKey: STREAMS_PER_KEY, streams },
      OPEN_TIMEOUT_MS + 120_000,
    );
    const openCpuSeconds = cpuSeconds(serverPid) - cpuBefore;
    const rssOpen = processMemory(serverPid);
    const metricsOpen = await serviceMetrics(metricsUrl);
    log(
      `streams: ${opened.open} of ${streams} open with their first event in ${(opened.ms / 1000).toFixed(1)} s; service RSS ${num(rssBefore.rssMb, 1)} -> ${num(rssOpen.rssMb, 1)} MB`,
    );
    if (opened.open < streams) log(`!!! ${streams - opened.open} streams did not open: ${describeCounts(opened.failures)}`);
    const wrongFirstIds = opened.firstIds.filter(([id]) => opaqueTag(id) !== opaqueTag(fixture.etag));
    if (wrongFirstIds.length > 0) log(`!!! first event ids other than the current ETag ${fixture.etag}: ${JSON.stringify(wrongFirstIds)}`);

    // The change: the flag's number goes up by one, so the payload's length stays as it was.
    const flagId = fixture.flagIds[CHANGED_FLAG];
    if (!flagId) throw new Error(`the fixture has no flag ${CHANGED_FLAG}`);
    const current = await call('GET', `${baseUrl}/v1/flags/${flagId}`, 200, { headers: auth });
    const changeCpuBefore = cpuSeconds(serverPid);
    const changed = await client.request(
      {
        type: 'change',
        url: `${baseUrl}/v1/flags/${flagId}`,
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'number', value: current.value + 1 }),
        timeoutMs: FAN_OUT_TIMEOUT_MS,
      },
      FAN_OUT_TIMEOUT_MS + 30_000,
    );
    const changeCpuSeconds = cpuSeconds(serverPid) - changeCpuBefore;
    const rssChanged = processMemory(serverPid);
    const after = await httpRequest('GET', configUrl, { headers: auth });
    const newEtag = after.headers.etag;
    log(
      `streams: PATCH answered ${changed.patchStatus} in ${num(changed.patchMs, 1)} ms; ${changed.received} of ${changed.expected} streams had the new event, ` +
        `median ${num(changed.medianMs, 1)} ms, last ${num(changed.lastMs, 1)} ms`,
    );
    if (process.env.BENCH_CPU_PROF) log(`streams: the PATCH was sent at ${changed.sentMonotonicUs} us of CLOCK_MONOTONIC (the profile's clock)`);
    const eventEtagOk = changed.etags.length === 1 && opaqueTag(changed.etags[0]) === opaqueTag(newEtag) && newEtag !== fixture.etag;
    if (!eventEtagOk) log(`!!! the events carried ${JSON.stringify(changed.etags)}; the poll now answers ETag ${newEtag} (was ${fixture.etag})`);
    if (after.body.length !== fixture.payload.length)
      log(`note: the payload went from ${fixture.payload.length} to ${after.body.length} bytes with the change`);

    const withStreams = await pollRuns(`${opened.open} streams open`, newEtag);
    const status = await client.request({ type: 'status' }, 10_000);
    const rssEnd = processMemory(serverPid);
    await client.request({ type: 'close' }, 30_000);
    // The service hears of the closes as they come: the next runs start once its gauge says none is left.
    let closedAt = await serviceMetrics(metricsUrl);
    for (let waited = 0; waited < 10_000 && closedAt && closedAt.streams > 0; waited += 200) {
      await sleep(200);
      closedAt = await serviceMetrics(metricsUrl);
    }
    if (closedAt && closedAt.streams > 0) log(`!!! the service still counts ${closedAt.streams} open streams 10 s after the client closed them all`);
    const afterStreams = await pollRuns('no streams (closed)', newEtag);
    return {
      streams,
      keyCount,
      opened,
      stillOpen: status.open,
      rss: { before: rssBefore, open: rssOpen, changed: rssChanged, end: rssEnd },
      heapUsedMb: { before: metricsBefore?.heapUsedMb, open: metricsOpen?.heapUsedMb },
      serverStreams: metricsOpen?.streams,
      openCpuSeconds,
      changeCpuSeconds,
      changed,
      eventEtagOk,
      polls: { without, with: withStreams, after: afterStreams },
      tool: tool.name,
      settings: { connections, duration, warmup },
    };
  } finally {
    await client.stop();
  }
}

const mean = (a, b) => (a + b) / 2;

function describeCounts(counts) {
  return Object.entries(counts)
    .map(([reason, count]) => `${count} x ${reason}`)
    .join(', ');
}

/** The report: what was held, the three targets, and the poll runs. */
function formatStreamsReport(summary, { limitedNote } = {}) {
  const { opened, changed, rss } = summary;
  const lines = [];
  lines.push(
    `streams open: ${opened.open} of ${summary.streams} (${summary.keyCount} keys), opened in ${num(opened.ms / 1000, 1)} s ` +
      `(${num(opened.open / (opened.ms / 1000))}/s, service CPU ${num((summary.openCpuSeconds * 1e6) / Math.max(1, opened.open))} us per open); ` +
      `${summary.stillOpen} still open at the end; the service's gauge said ${num(summary.serverStreams)} once open`,
  );
  if (opened.open < summary.streams) lines.push(`!!! not opened: ${describeCounts(opened.failures)}`);
  if (opened.extraStatus !== undefined) {
    lines.push(`stream ${STREAMS_PER_KEY + 1} on one key: ${opened.extraStatus} ${opened.extraStatus === 429 ? 'ok' : '!!! expected 429'}`);
  }
  const memory = (label, sample) => `${label} ${num(sample.rssMb, 1)} (peak so far ${num(sample.peakMb, 1)})`;
  lines.push(
    `service RSS, MB: ${memory('before opening', rss.before)}; ${memory('streams open with their first event', rss.open)}; ` +
      `${memory('after the change', rss.changed)}; ${memory('after the poll runs beside them', rss.end)}`,
    `V8 heap in use (not after a full GC), MB: ${num(summary.heapUsedMb.before, 1)} before opening, ${num(summary.heapUsedMb.open, 1)} with the streams open`,
  );
  lines.push(
    `change: PATCH answered ${changed.patchStatus} in ${num(changed.patchMs, 1)} ms; ${changed.received} of ${changed.expected} streams had the new event ` +
      `(first ${num(changed.firstMs, 1)} ms, median ${num(changed.medianMs, 1)} ms, p99 ${num(changed.p99Ms, 1)} ms, last ${num(changed.lastMs, 1)} ms ` +
      `after the PATCH was sent); service CPU ${num(summary.changeCpuSeconds * 1000)} ms, stream client CPU ${num(changed.clientCpuMs)} ms${summary.eventEtagOk ? '' : '; !!! the events did not carry the new ETag'}`,
  );
  lines.push('');

  const rows = [
    [
      'path',
      'streams',
      'req/s',
      'p50 ms',
      'p99 ms',
      'responses',
      'server CPU',
      'CPU us/req',
      'GC ms',
      'major GC ms',
      'max loop delay ms',
      'core 0 other',
      'check',
    ],
  ];
  const order = [
    ['none, before', summary.polls.without],
    [`${opened.open} open`, summary.polls.with],
    ['none, after', summary.polls.after],
  ];
  for (const path of ['304', '200']) {
    for (const [label, runs] of order) {
      const run = runs[path];
      rows.push([
        path,
        label,
        num(run.reqPerSec),
        ms(run.p50Ms, run.tool),
        ms(run.p99Ms, run.tool),
        String(run.requests),
        `${num(run.cpuPercent)}%`,
        num(run.cpuMicrosPerRequest, 1),
        num(run.gc.totalMs),
        num(run.gc.majorMs),
        num(run.lagMaxMs),
        `${num(run.othersCpuPercent)}%`,
        run.valid ? 'ok' : `INVALID: ${run.problems.join(', ')}`,
      ]);
    }
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const table = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
  table.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '));
  lines.push(...table, '');

  for (const check of streamVerdicts(summary)) {
    lines.push(`${`${check.label}:`.padEnd(44)} ${check.text}  (target ${check.target})  ${pass(check.ok)}`);
  }
  const { polls } = summary;
  const cpuRatio = (path) =>
    mean(polls.without[path].cpuMicrosPerRequest, polls.after[path].cpuMicrosPerRequest) / polls.with[path].cpuMicrosPerRequest;
  const drift = (path) => polls.after[path].reqPerSec / polls.without[path].reqPerSec;
  lines.push(
    `server CPU per request, no streams (mean)/with streams: 304 path ${num(cpuRatio('304'), 2)}, 200 path ${num(cpuRatio('200'), 2)}  (information)`,
  );
  lines.push(`no-stream req/s after/before (the machine's drift): 304 path ${num(drift('304'), 2)}, 200 path ${num(drift('200'), 2)}  (information)`);
  const disturbed = ['304', '200'].some((path) =>
    ['without', 'with', 'after'].some((when) => polls[when][path].othersCpuPercent > OTHERS_WARNING_PERCENT),
  );
  if (disturbed) {
    lines.push(
      `!!! other work took more than ${OTHERS_WARNING_PERCENT}% of the server's core during a poll run (column "core 0 other"): the ratio is suspect, rerun on a quiet machine`,
    );
  }
  if (limitedNote) lines.push(limitedNote);
  return lines.join('\n');
}

function streamVerdicts(summary) {
  const { opened, changed, rss } = summary;
  const allOpen = opened.open === summary.streams;
  const growth = rss.open.rssMb - rss.before.rssMb;
  const perThousand = opened.open > 0 ? growth / (opened.open / 1000) : Number.NaN;
  const checks = [
    {
      label: `last of ${changed.expected} streams has the change`,
      text:
        changed.received === changed.expected
          ? `${num(changed.lastMs, 1)} ms (median ${num(changed.medianMs, 1)} ms)`
          : `${changed.expected - changed.received} streams never had it within ${FAN_OUT_TIMEOUT_MS / 1000} s`,
      target: `<= ${TARGETS.fanOutMs} ms`,
      ok:
        allOpen && summary.eventEtagOk && changed.patchStatus === 200 && changed.received === changed.expected && changed.lastMs <= TARGETS.fanOutMs,
    },
    {
      label: 'service RSS per 1,000 streams',
      text: `${num(perThousand, 1)} MB (${growth >= 0 ? '+' : ''}${num(growth, 1)} MB for ${opened.open})`,
      target: `< ${TARGETS.rssMbPer1000} MB`,
      ok: allOpen && perThousand < TARGETS.rssMbPer1000,
    },
  ];
  for (const path of ['304', '200']) {
    const before = summary.polls.without[path];
    const after = summary.polls.after[path];
    const during = summary.polls.with[path];
    const baseline = mean(before.reqPerSec, after.reqPerSec);
    const ratio = during.reqPerSec / baseline;
    checks.push({
      label: `poll req/s with streams / without, ${path}`,
      text: `${num(ratio, 2)} (${num(during.reqPerSec)} / ${num(baseline)})`,
      target: `>= ${TARGETS.pollRatio}`,
      ok: allOpen && before.valid && after.valid && during.valid && ratio >= TARGETS.pollRatio,
    });
  }
  return checks;
}

module.exports = { runStreamsBench, formatStreamsReport, planOpenFiles, DEFAULT_STREAMS, STREAMS_PER_KEY, TARGETS };

// ---------------------------------------------------------------------------------------------------------
// The stream client (`node bench/streams.js --client`), driven over IPC by runStreamsBench.

/** Per stream: its socket, and the ids of the events it had. */
function createStream() {
  return {
    socket: null,
    status: 0,
    head: '',
    pending: '',
    firstId: null,
    lastId: null,
    idAtChange: null,
    changedNs: undefined,
    closed: false,
    error: undefined,
  };
}

/** Reads the `id:` lines of what arrived (chunk-size lines of the chunked body are bare hex, never `id: `). */
function readEvents(stream, text, onId) {
  const lines = (stream.pending + text).split('\n');
  stream.pending = lines.pop();
  // A comment every 15 s and nothing else comes between events: a long partial line is not a stream's.
  if (stream.pending.length > 4096) stream.pending = '';
  for (const line of lines) {
    if (!line.startsWith('id: ')) continue;
    const id = line.endsWith('\r') ? line.slice(4, -1) : line.slice(4);
    if (stream.firstId === null) stream.firstId = id;
    stream.lastId = id;
    onId(stream, id);
  }
}

/** Opens one stream; resolves once its status is known and, for a 200, its first event has come. */
function openStream({ host, port, path }, key, onId) {
  return new Promise((resolve) => {
    const stream = createStream();
    const socket = net.connect({ host, port });
    stream.socket = socket;
    let settled = false;
    const settle = (reason) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ stream, reason });
    };
    const timer = setTimeout(() => {
      settle('no first event in time');
      socket.destroy();
    }, OPEN_TIMEOUT_MS);
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.once('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    socket.on('data', (chunk) => {
      let text = chunk;
      if (stream.status === 0) {
        stream.head += chunk;
        const end = stream.head.indexOf('\r\n\r\n');
        if (end === -1) {
          if (stream.head.length > 16_384) socket.destroy();
          return;
        }
        stream.status = Number(stream.head.slice(9, 12)) || -1;
        text = stream.head.slice(end + 4);
        stream.head = '';
        if (stream.status !== 200) {
          settle(`status ${stream.status}`);
          socket.destroy();
          return;
        }
      }
      readEvents(stream, text, onId);
      if (stream.firstId !== null) settle(null);
    });
    socket.on('error', (error) => {
      stream.error = error.code || error.message;
    });
    socket.on('close', () => {
      stream.closed = true;
      settle(stream.error ? `error ${stream.error}` : 'closed');
    });
  });
}

function runClient() {
  const open = [];
  /** The change being timed: when its PATCH was sent, and who has had the new event. */
  let change = null;
  const onId = (stream, id) => {
    if (!change || stream.changedNs !== undefined || id === stream.idAtChange) return;
    stream.changedNs = process.hrtime.bigint() - change.sentNs;
    change.etags.add(id);
    change.received++;
    if (change.received === change.expected) change.done();
  };

  const handlers = {
    async open({ host, port, path, keys, perKey, streams }) {
      const started = process.hrtime.bigint();
      const failures = {};
      const firstIds = new Map();
      const indexes = Array.from({ length: streams }, (_, index) => index);
      await mapLimit(indexes, OPEN_CONCURRENCY, async (index) => {
        const { stream, reason } = await openStream({ host, port, path }, keys[Math.floor(index / perKey)], onId);
        if (reason === null) {
          open.push(stream);
          firstIds.set(stream.firstId, (firstIds.get(stream.firstId) || 0) + 1);
        } else failures[reason] = (failures[reason] || 0) + 1;
      });
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The per-key cap: one more on the first key, which holds `perKey` streams now.
      let extraStatus;
      if (streams >= perKey && Object.keys(failures).length === 0) {
        const extra = await openStream({ host, port, path }, keys[0], () => undefined);
        extraStatus = extra.stream.status;
        extra.stream.socket.destroy();
      }
      return { open: open.length, ms: elapsedMs, failures, firstIds: [...firstIds], extraStatus };
    },

    async change({ url, headers, body, timeoutMs }) {
      const live = open.filter((stream) => !stream.closed);
      for (const stream of open) stream.idAtChange = stream.lastId;
      let done;
      const allHad = new Promise((resolve) => (done = resolve));
      // Every stream opened is expected to have it: one that closed meanwhile counts as missed.
      change = { sentNs: 0n, expected: open.length, received: 0, etags: new Set(), done };
      const cpuBefore = process.cpuUsage();
      change.sentNs = process.hrtime.bigint();
      const patch = await new Promise((resolve) => {
        const request = http.request(
          url,
          { method: 'PATCH', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) }, agent: false },
          (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode, ns: process.hrtime.bigint() - change.sentNs }));
          },
        );
        request.on('error', (error) => resolve({ status: `error ${error.message}`, ns: process.hrtime.bigint() - change.sentNs }));
        request.end(body);
      });
      let timer;
      if (change.received < change.expected) {
        await Promise.race([allHad, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
        clearTimeout(timer);
      }
      const cpu = process.cpuUsage(cpuBefore);
      const latencies = open
        .filter((stream) => stream.changedNs !== undefined)
        .map((stream) => Number(stream.changedNs) / 1e6)
        .sort((a, b) => a - b);
      const at = (share) => (latencies.length > 0 ? latencies[Math.min(latencies.length - 1, Math.ceil(share * latencies.length) - 1)] : undefined);
      const result = {
        // CLOCK_MONOTONIC, as V8's CPU profiles time their samples: finds the change in BENCH_CPU_PROF's profile.
        sentMonotonicUs: Number(change.sentNs / 1000n),
        patchStatus: patch.status,
        patchMs: Number(patch.ns) / 1e6,
        expected: change.expected,
        liveAtChange: live.length,
        received: latencies.length,
        etags: [...change.etags],
        firstMs: latencies[0],
        medianMs: at(0.5),
        p99Ms: at(0.99),
        lastMs: latencies[latencies.length - 1],
        // This process reads every stream's event itself: its CPU is part of the time until the last one.
        clientCpuMs: (cpu.user + cpu.system) / 1000,
      };
      change = null;
      return result;
    },

    async status() {
      return { open: open.filter((stream) => !stream.closed).length };
    },

    async close() {
      const count = open.length;
      closeAll();
      open.length = 0;
      return { closed: count };
    },
  };

  const closeAll = () => {
    for (const stream of open) stream.socket.destroy();
  };
  process.on('message', (message) => {
    if (message.type === 'exit') {
      closeAll();
      process.exit(0);
    }
    const handler = handlers[message.type];
    if (!handler) return process.send({ id: message.id, error: `unknown command ${message.type}` });
    handler(message).then(
      (answer) => process.send({ id: message.id, ...answer }),
      (error) => process.send({ id: message.id, error: error.stack || error.message }),
    );
  });
  // The bench went away: nothing is left holding the streams.
  process.on('disconnect', () => {
    closeAll();
    process.exit(0);
  });
  process.on('SIGTERM', () => {
    closeAll();
    process.exit(0);
  });
}

if (require.main === module && process.argv[2] === '--client') runClient();
