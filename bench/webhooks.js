'use strict';
/**
 * What webhooks cost the write path (BENCH_ONLY=webhooks). One service, three organizations with the same flags: one
 * without endpoints, one with three endpoints on a receiver on loopback (deliveries flowing while it writes), one with
 * three disabled endpoints (each write's event and rows written, nothing delivered: the write path's own share). Each
 * is written to by WRITERS loops, each PATCHing its own flag to a new value (a real change: an audit entry, the config
 * version, and for the second organization an event and three queued deliveries), in paired runs alternating which
 * goes first. The figures: the writes/s ratio (endpoints / none), the server CPU per write of each, and whether every
 * write's deliveries reached the receiver (each event once per endpoint, nothing lost) and how long after the last
 * write they had.
 */
const http = require('node:http');
const { call, cpuSeconds, median, num } = require('./config-poll');

const WRITERS = 8;
const ENDPOINTS = 3;
const PASSWORD = 'bench passphrase of some length';

/** A receiver on loopback that answers 200 and counts deliveries by webhook-id. */
async function startReceiver() {
  const seen = new Map();
  let total = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      total++;
      response.writeHead(200).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    get total() {
      return total;
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** An organization with a signed-in admin, its WRITERS flags, and `endpoints` endpoints on the receiver. */
async function organization({ baseUrl, adminToken, name, endpoints, receiver, disabled = false }) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const email = `bench-${name.toLowerCase().replace(/\W+/g, '-')}@bench.example`;
  const org = await call('POST', `${baseUrl}/v1/admin/organizations`, 201, {
    headers: admin,
    body: { name, admin: { email, name: 'Bench', password: PASSWORD } },
  });
  await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/subscriptions`, 201, { headers: admin, body: { plan: 'bench' } });
  const signIn = await new Promise((resolve, reject) => {
    const payload = JSON.stringify({ email, password: PASSWORD });
    const req = http.request(`${baseUrl}/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ cookie: String(res.headers['set-cookie']).split(';')[0], body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
  const session = { Cookie: signIn.cookie, 'X-CSRF-Token': signIn.body.csrfToken, 'X-Organization-Id': org.id };
  for (let index = 0; index < endpoints; index++) {
    const endpoint = await call('POST', `${baseUrl}/v1/organization/webhooks`, 201, {
      headers: session,
      body: { url: `${receiver.url}/${index}`, events: ['flag.changed'], format: 'standard' },
    });
    if (disabled) await call('PATCH', `${baseUrl}/v1/organization/webhooks/${endpoint.id}`, 200, { headers: session, body: { enabled: false } });
  }
  const flags = [];
  for (let index = 0; index < WRITERS; index++) {
    flags.push(
      await call('POST', `${baseUrl}/v1/flags`, 201, {
        headers: session,
        body: { key: `bench_write_${index}`, name: `Write ${index}`, type: 'number', value: 0 },
      }),
    );
  }
  return { session, flags };
}

/** WRITERS loops PATCHing for `seconds`: writes done, and the server's CPU seconds meanwhile. */
async function writeFor({ baseUrl, org, seconds, serverPid, start }) {
  const until = Date.now() + seconds * 1000;
  const cpuBefore = cpuSeconds(serverPid);
  let writes = 0;
  await Promise.all(
    org.flags.map(async (flag, index) => {
      for (let value = start + index * 1_000_000; Date.now() < until; value++) {
        await call('PATCH', `${baseUrl}/v1/flags/${flag.id}`, 200, { headers: org.session, body: { type: 'number', value } });
        writes++;
      }
    }),
  );
  return { writes, rate: writes / seconds, cpuMicrosPerWrite: ((cpuSeconds(serverPid) - cpuBefore) * 1e6) / writes };
}

async function runWebhooksBench({ baseUrl, adminToken, serverPid, log, duration = 10, rounds = 5 }) {
  const receiver = await startReceiver();
  try {
    const plain = await organization({ baseUrl, adminToken, name: 'Bench without endpoints', endpoints: 0, receiver });
    const hooked = await organization({ baseUrl, adminToken, name: 'Bench with endpoints', endpoints: ENDPOINTS, receiver });
    // Events written and their rows recorded as skipped, nothing delivered: the write path's own share.
    const skipped = await organization({
      baseUrl,
      adminToken,
      name: 'Bench with disabled endpoints',
      endpoints: ENDPOINTS,
      receiver,
      disabled: true,
    });
    const seconds = Math.max(1, duration / rounds);
    log(`fixture: two organizations of ${WRITERS} flags, one with ${ENDPOINTS} endpoints; ${rounds} paired runs of ${seconds} s`);
    const runs = { plain: [], hooked: [], skipped: [] };
    const orgs = { plain, hooked, skipped };
    let start = 1;
    for (let round = 0; round < rounds; round++) {
      const order = [
        ['plain', 'skipped', 'hooked'],
        ['hooked', 'plain', 'skipped'],
        ['skipped', 'hooked', 'plain'],
      ][round % 3];
      for (const which of order) {
        const run = await writeFor({ baseUrl, org: orgs[which], seconds, serverPid, start });
        start += 10_000_000;
        runs[which].push(run);
      }
    }
    const written = runs.hooked.reduce((sum, run) => sum + run.writes, 0) + WRITERS; // and the flags' creation
    const expected = written * ENDPOINTS;
    // The hooked organization's deliveries may still be going out after the last run of another.
    const lastWrite = Date.now();
    while (receiver.total < expected && Date.now() - lastWrite < 120_000) await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      plain: { rate: median(runs.plain.map((run) => run.rate)), cpu: median(runs.plain.map((run) => run.cpuMicrosPerWrite)) },
      hooked: { rate: median(runs.hooked.map((run) => run.rate)), cpu: median(runs.hooked.map((run) => run.cpuMicrosPerWrite)) },
      skipped: { rate: median(runs.skipped.map((run) => run.rate)), cpu: median(runs.skipped.map((run) => run.cpuMicrosPerWrite)) },
      expected,
      delivered: receiver.total,
      drainMs: Date.now() - lastWrite,
    };
  } finally {
    await receiver.stop();
  }
}

function formatWebhooksReport(result) {
  const ratio = result.hooked.rate / result.plain.rate;
  return [
    `flag PATCH, ${WRITERS} writers, no endpoint:      ${num(result.plain.rate)} writes/s, server CPU ${num(result.plain.cpu)} µs a write`,
    `flag PATCH, ${WRITERS} writers, ${ENDPOINTS} endpoints:       ${num(result.hooked.rate)} writes/s, server CPU ${num(result.hooked.cpu)} µs a write (delivering too)`,
    `flag PATCH, ${WRITERS} writers, ${ENDPOINTS} disabled:        ${num(result.skipped.rate)} writes/s, server CPU ${num(result.skipped.cpu)} µs a write (events written, rows skipped)`,
    `ratio (endpoints / none): ${ratio.toFixed(2)}; the write path alone (disabled / none): ${(result.skipped.rate / result.plain.rate).toFixed(2)}`,
    `deliveries: ${result.delivered} of ${result.expected} (${ENDPOINTS} per write) at the receiver ${num(result.drainMs)} ms after the last write`,
  ].join('\n');
}

module.exports = { runWebhooksBench, formatWebhooksReport };
