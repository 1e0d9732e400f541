'use strict';
/**
 * One organization of 10,000 flags (BENCH_ONLY=large): what an operator's allowance of 10,000 (the most there is)
 * costs the hot paths, as ratios to a baseline in the same run.
 * - The poll, GET /v1/flags/config, 304 and 200 paths: the service against the bare node:http server serving the same
 *   10,000-flag payload (bench/config-poll.js's comparison, run on this organization's fixture).
 * - The console's flag list, GET /v1/flags?page=1&limit=20&includeArchived=false (console/src/pages/Flags.tsx's first
 *   page): the 10,000-flag organization against a 50-flag one on the same service, in paired runs; then the same with
 *   the allowance lowered to 50, so that 9,950 flags are locked (each page ranks its own flags against it); and the last
 *   page (page 500), information only.
 * The organization is given its own allowance of 10,000 through the admin API (PATCH {flagAllowance}), and its flags
 * are written by POST /v1/flags/import in documents of 1,000 (the import's limit): its time is reported too.
 */
const { call, flagBody, httpRequest, num, pairedRuns, runConfigPollBench, formatConfigPollReport } = require('./config-poll');

const LARGE = 10_000;
const SMALL = 50;
const IMPORT_BATCH = 1_000;
const PAGE_SIZE = 20;
const LIST = `/v1/flags?page=1&limit=${PAGE_SIZE}&includeArchived=false`;
const LAST_PAGE = `/v1/flags?page=${LARGE / PAGE_SIZE}&limit=${PAGE_SIZE}&includeArchived=false`;

/** flagBody's values, under keys that stay unique past 100 flags. */
function exportedFlag(index) {
  const flag = flagBody(index);
  return { ...flag, key: `bench_flag_${String(index).padStart(5, '0')}`, description: null, archived: false };
}

async function organization({ baseUrl, adminToken, name, flags, log }) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const org = await call('POST', `${baseUrl}/v1/admin/organizations`, 201, { headers: admin, body: { name } });
  await call('PATCH', `${baseUrl}/v1/admin/organizations/${org.id}`, 200, { headers: admin, body: { flagAllowance: flags } });
  const key = await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/api-keys`, 201, {
    headers: admin,
    body: { name: 'bench', permissions: ['FLAGS_READ', 'FLAGS_WRITE'] },
  });
  const auth = { Authorization: `Bearer ${key.key}` };
  const started = process.hrtime.bigint();
  for (let from = 0; from < flags; from += IMPORT_BATCH) {
    const document = Array.from({ length: Math.min(IMPORT_BATCH, flags - from) }, (_, offset) => exportedFlag(from + offset));
    const report = await call('POST', `${baseUrl}/v1/flags/import`, 200, { headers: auth, body: { flags: document } });
    if (report.created.length !== document.length) throw new Error(`the import created ${report.created.length} of ${document.length} flags`);
  }
  const importSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const quota = await call('GET', `${baseUrl}/v1/flags/quota`, 200, { headers: auth });
  if (quota.used !== flags || quota.max !== flags || quota.locked !== 0) throw new Error(`quota ${JSON.stringify(quota)} after the import`);
  log(`${name}: ${flags} flags imported in ${num(importSeconds, 1)} s`);
  return { id: org.id, keyId: key.id, key: key.key, auth, importSeconds };
}

/** The config fixture runConfigPollBench measures (setupFixture's shape). */
async function configFixture(baseUrl, org, flagCount) {
  const config = await httpRequest('GET', `${baseUrl}/v1/flags/config`, { headers: org.auth });
  if (config.status !== 200) throw new Error(`GET /v1/flags/config answered ${config.status}`);
  const flags = JSON.parse(config.body.toString()).flags;
  if (flags.length !== flagCount) throw new Error(`the config payload holds ${flags.length} flags, expected ${flagCount}`);
  return {
    organizationId: org.id,
    keyId: org.keyId,
    key: org.key,
    etag: config.headers.etag,
    payload: config.body,
    contentType: config.headers['content-type'],
    flagCount,
  };
}

/** A list page's bytes, checked: 200, the page's flags, the quota, and how many of them are locked. */
async function probeList(baseUrl, org, path, { flags, locked }) {
  const answer = await httpRequest('GET', `${baseUrl}${path}`, { headers: org.auth });
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
  const body = JSON.parse(answer.body.toString());
  const lockedOnPage = body.results.filter((flag) => flag.locked).length;
  if (body.results.length !== PAGE_SIZE || body.total !== flags || lockedOnPage !== locked) {
    throw new Error(
      `GET ${path}: ${body.results.length} flags of ${body.total}, ${lockedOnPage} locked; expected ${PAGE_SIZE} of ${flags}, ${locked} locked`,
    );
  }
  return answer.body.length;
}

async function runLargeOrgBench(options) {
  const { baseUrl, adminToken, serverPid, log, tmpDir, pin, tool, duration = 10, connections = 50, warmup = 2, rounds = 5 } = options;
  const small = await organization({ baseUrl, adminToken, name: `Bench ${SMALL} flags`, flags: SMALL, log });
  const large = await organization({ baseUrl, adminToken, name: `Bench ${LARGE} flags`, flags: LARGE, log });

  // The poll of each organization against bare node:http serving its payload: the 50-flag one is the usual fixture's size.
  const pollOf = async (org, flagCount) =>
    runConfigPollBench({ ...options, duration, connections, warmup, rounds, fixture: await configFixture(baseUrl, org, flagCount) });
  const smallPoll = await pollOf(small, SMALL);
  const poll = await pollOf(large, LARGE);

  const roundSeconds = Math.max(1, Math.round(duration / rounds));
  const common = { tool, connections, pin, tmpDir, log };
  const load = (org, path, payloadBytes) => ({ url: `${baseUrl}${path}`, headers: org.auth, payloadBytes });
  const bytes = {
    small: await probeList(baseUrl, small, LIST, { flags: SMALL, locked: 0 }),
    large: await probeList(baseUrl, large, LIST, { flags: LARGE, locked: 0 }),
    last: await probeList(baseUrl, large, LAST_PAGE, { flags: LARGE, locked: 0 }),
  };
  log(`loading the console's flag list: ${rounds} pairs of ${roundSeconds} s runs, ${connections} connections`);
  const list = await pairedRuns({
    loads: { [`${SMALL} flags`]: load(small, LIST, bytes.small), [`${LARGE} flags`]: load(large, LIST, bytes.large) },
    rounds,
    roundSeconds,
    warmup,
    common,
    serverPid,
  });
  const lastPage = await pairedRuns({
    loads: { [`${SMALL} flags`]: load(small, LIST, bytes.small), [`${LARGE} flags, last page`]: load(large, LAST_PAGE, bytes.last) },
    rounds,
    roundSeconds,
    warmup: 0,
    common,
    serverPid,
  });

  // The operator lowers the allowance to 50: the first page (the newest 20) is all locked.
  await call('PATCH', `${baseUrl}/v1/admin/organizations/${large.id}`, 200, {
    headers: { Authorization: `Bearer ${adminToken}` },
    body: { flagAllowance: SMALL },
  });
  const lockedBytes = await probeList(baseUrl, large, LIST, { flags: LARGE, locked: PAGE_SIZE });
  const locked = await pairedRuns({
    loads: { [`${SMALL} flags`]: load(small, LIST, bytes.small), [`${LARGE} flags, ${LARGE - SMALL} locked`]: load(large, LIST, lockedBytes) },
    rounds,
    roundSeconds,
    warmup: 0,
    common,
    serverPid,
  });
  return { smallPoll, poll, list, lastPage, locked, importSeconds: large.importSeconds, rounds, roundSeconds, connections };
}

function formatLargeOrgReport(result) {
  const row = (name, runs) =>
    `  ${name.padEnd(34)} ${num(runs.reqPerSec).padStart(8)} req/s   p99 ${num(runs.p99Ms, 2).padStart(7)} ms   ${num(runs.cpuMicrosPerRequest, 1).padStart(8)} µs CPU/request${runs.valid ? '' : '   (INVALID: ' + runs.problems.join(', ') + ')'}`;
  const comparison = (title, measured) => {
    const [baseline, name] = Object.keys(measured).slice(0, 2);
    return [
      title,
      row(baseline, measured[baseline]),
      row(name, measured[name]),
      `  ratio (${name} / ${baseline}), median of ${result.rounds} pairs of ${result.roundSeconds} s: ${num(measured.ratio, 2)}  [${measured.ratios
        .map((ratio) => num(ratio, 2))
        .join(', ')}]; server CPU per request ${num(measured.cpuRatio, 2)}x`,
    ];
  };
  return [
    `setup: ${LARGE} flags imported in ${num(result.importSeconds, 1)} s (documents of ${IMPORT_BATCH})`,
    '',
    `-- The poll, GET /v1/flags/config (${LARGE} flags, ${result.poll.servicePayloadBytes} bytes), service against bare node:http --`,
    formatConfigPollReport(result.poll, 'large'),
    '',
    `-- The same poll of the ${SMALL}-flag organization (${result.smallPoll.servicePayloadBytes} bytes), in this run --`,
    formatConfigPollReport(result.smallPoll, 'large'),
    '',
    `-- The poll, ${LARGE} flags against ${SMALL} --`,
    ...['304', '200'].map(
      (path) =>
        `  ${path} path: ratio service/bare ${num(result.poll.ratios[path], 2)} (${SMALL} flags: ${num(result.smallPoll.ratios[path], 2)}); ` +
        `service CPU per request ${num(result.poll.runs[path].service.cpuMicrosPerRequest, 1)} µs (${SMALL} flags: ` +
        `${num(result.smallPoll.runs[path].service.cpuMicrosPerRequest, 1)} µs)`,
    ),
    '',
    ...comparison(`-- The console's flag list, GET ${LIST} --`, result.list),
    '',
    ...comparison(`-- The list's last page, GET ${LAST_PAGE} (information) --`, result.lastPage),
    '',
    ...comparison(`-- The console's flag list with the allowance lowered to ${SMALL} (every flag of the page locked) --`, result.locked),
  ].join('\n');
}

module.exports = { runLargeOrgBench, formatLargeOrgReport, LARGE };
