'use strict';
/**
 * OFREP with targeting (BENCH_ONLY=ofrep): what evaluating rules costs the bulk evaluation. One service, two
 * organizations with the same 50 flags (bench/config-poll.js's flagBody): one without rules, one with 5 rules on
 * every flag (region, build, level and percentage conditions, the context matching none, so every rule of every flag
 * is evaluated: the worst case). POST /ofrep/v1/evaluate/flags with the same context for both, on the 200 path, in
 * paired runs (alternating which goes first). The figures: the requests/s ratio (rules / no rules), and the server
 * CPU per request of each, whose difference divided by 250 rules is the cost of evaluating one rule.
 */
const { call, flagBody, httpRequest, median, num, pairedRuns } = require('./config-poll');

const FLAG_COUNT = 50;
const PATH = '/ofrep/v1/evaluate/flags';
const CONTEXT = { targetingKey: 'player-8812', serverId: 'us-east-4', region: 'us-east', build: '1.3.9', level: 3, platform: 'pc' };
const BODY = JSON.stringify({ context: CONTEXT });

/** Five rules a live-ops team might write; none holds for CONTEXT, so each is evaluated to its end. */
function rulesFor(flag) {
  const value = flag.value;
  return [
    { id: 'europe', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west', 'eu-central', 'eu-north'] }], value },
    { id: 'new-builds', conditions: [{ attribute: 'build', operator: 'semverGte', values: ['1.4.0'] }], value },
    {
      id: 'canary',
      conditions: [
        { attribute: 'platform', operator: 'in', values: ['pc', 'console'] },
        { attribute: 'serverId', operator: 'percentage', values: [0, 0.01] },
      ],
      value,
    },
    { id: 'veterans', conditions: [{ attribute: 'level', operator: 'gte', values: [50] }], value },
    {
      id: 'players-split',
      conditions: [
        { attribute: 'region', operator: 'notIn', values: ['ap-south'] },
        { attribute: 'targetingKey', operator: 'percentage', values: [99.99, 100] },
      ],
      value,
    },
  ];
}

async function organization({ baseUrl, adminToken, name, withRules }) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const org = await call('POST', `${baseUrl}/v1/admin/organizations`, 201, { headers: admin, body: { name } });
  await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/subscriptions`, 201, { headers: admin, body: { plan: 'bench' } });
  const key = await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/api-keys`, 201, {
    headers: admin,
    body: { name: 'bench', permissions: ['FLAGS_READ', 'FLAGS_WRITE'] },
  });
  const auth = { Authorization: `Bearer ${key.key}` };
  for (let index = 0; index < FLAG_COUNT; index++) {
    const flag = flagBody(index);
    await call('POST', `${baseUrl}/v1/flags`, 201, { headers: auth, body: withRules ? { ...flag, rules: rulesFor(flag) } : flag });
  }
  return { key: key.key };
}

/** The answer a load run must get: 200, every flag, the reasons rules give (or STATIC without them). */
async function probe(baseUrl, key, withRules) {
  const answer = await httpRequest('POST', `${baseUrl}${PATH}`, {
    headers: { Authorization: `Bearer ${key}` },
    body: { context: CONTEXT },
  });
  if (answer.status !== 200) throw new Error(`${PATH} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
  const { flags } = JSON.parse(answer.body.toString());
  const reasons = [...new Set(flags.map((flag) => flag.reason))];
  const expected = withRules ? 'DEFAULT' : 'STATIC';
  if (flags.length !== FLAG_COUNT || reasons.length !== 1 || reasons[0] !== expected) {
    throw new Error(`${PATH} evaluated ${flags.length} flags with reasons ${reasons.join(', ')}; expected ${FLAG_COUNT}, all ${expected}`);
  }
  return answer.body.length;
}

async function runOfrepBench({ baseUrl, adminToken, serverPid, log, tmpDir, pin, tool, duration = 10, connections = 50, warmup = 2, rounds = 5 }) {
  const plain = await organization({ baseUrl, adminToken, name: 'Bench without rules', withRules: false });
  const targeted = await organization({ baseUrl, adminToken, name: 'Bench with rules', withRules: true });
  const bytes = { plain: await probe(baseUrl, plain.key, false), targeted: await probe(baseUrl, targeted.key, true) };
  log(`fixture: two organizations of ${FLAG_COUNT} flags, one with 5 rules on each; bulk answers of ${bytes.plain} and ${bytes.targeted} bytes`);

  const load = (org, payloadBytes) => ({ headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' }, payloadBytes });
  const common = { tool, url: `${baseUrl}${PATH}`, connections, pin, tmpDir, method: 'POST', body: BODY, log };
  const roundSeconds = Math.max(1, Math.round(duration / rounds));
  log(`loading OFREP bulk: ${rounds} pairs of ${roundSeconds} s runs, ${connections} connections`);
  const runs = await pairedRuns({
    loads: { plain: load(plain, bytes.plain), targeted: load(targeted, bytes.targeted) },
    rounds,
    roundSeconds,
    warmup,
    common,
    serverPid,
  });
  const extraMicros = median(runs.pairs.map((pair) => pair.targeted.cpuMicrosPerRequest - pair.plain.cpuMicrosPerRequest));
  return {
    plain: runs.plain,
    targeted: runs.targeted,
    ratio: runs.ratio,
    ratios: runs.ratios,
    extraMicros,
    rules: FLAG_COUNT * 5,
    bytes,
    roundSeconds,
    rounds,
    connections,
  };
}

function formatOfrepReport(result) {
  const row = (name, runs) =>
    `  ${name.padEnd(22)} ${num(runs.reqPerSec).padStart(8)} req/s   p99 ${num(runs.p99Ms, 2).padStart(7)} ms   ${num(runs.cpuMicrosPerRequest, 1).padStart(7)} µs CPU/request${runs.valid ? '' : '   (INVALID: ' + runs.problems.join(', ') + ')'}`;
  return [
    row('50 flags, no rules', result.plain),
    row('50 flags x 5 rules', result.targeted),
    `  ratio (with rules / without), median of ${result.rounds} pairs of ${result.roundSeconds} s: ${num(result.ratio, 2)}  [${result.ratios.map((ratio) => num(ratio, 2)).join(', ')}]`,
    `  evaluation cost: ${num(result.extraMicros, 1)} µs of server CPU per request for ${result.rules} rules, ${num((1000 * result.extraMicros) / result.rules, 0)} ns per rule (median of the pairs)`,
  ].join('\n');
}

module.exports = { runOfrepBench, formatOfrepReport, rulesFor, CONTEXT };
