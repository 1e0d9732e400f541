'use strict';
/**
 * Many small tenants (BENCH_ONLY=tenants): the database work the config poll costs when many organizations are
 * each polled now and then and nothing changes. BENCH_TENANTS organizations (default 300), each with a key and
 * a few flags, each polled every BENCH_TENANT_POLL_SECONDS (default 6) with If-None-Match, evenly spread, for
 * BENCH_TENANT_SECONDS (default 60). The figure is PostgreSQL's own count of transactions in the service's
 * database (pg_stat_database, commits and rollbacks) per 1,000 polls. Background work (the change feed's reads,
 * the sweeper, and PostgreSQL's own autovacuum, which visits the database every minute whatever the load) is
 * counted with the polls: it is what the deployment costs at rest.
 *
 * PostgreSQL publishes a backend's counts at most once a second while it is busy and within 10 s once idle, so the
 * window is read after a settling pause at both ends (the load goes on through it): both ends lag alike.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');

const FLAGS_PER_TENANT = 3;
const SETTLE_MS = 11_000;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function call(method, url, expected, { headers = {}, body } = {}) {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${url} answered ${response.status}, expected ${expected}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The service's database: DATABASE_URL, or the embedded one in the service's DATA_DIR, as its superuser. */
function databaseUrl(dataDir) {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const password = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
  const port = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')
    .split('\n')[3]
    .trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/flagstore`;
}

async function transactions(client) {
  const { rows } = await client.query(
    'SELECT (xact_commit + xact_rollback)::bigint AS count FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(rows[0].count);
}

async function setUpTenants({ baseUrl, adminToken, tenants, log }) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const made = [];
  for (let index = 0; index < tenants; index += 1) {
    const org = await call('POST', `${baseUrl}/v1/admin/organizations`, 201, { headers: admin, body: { name: `Tenant ${index}` } });
    const key = await call('POST', `${baseUrl}/v1/admin/organizations/${org.id}/api-keys`, 201, {
      headers: admin,
      body: { name: 'game servers', permissions: ['FLAGS_READ', 'FLAGS_WRITE'] },
    });
    const auth = { Authorization: `Bearer ${key.key}` };
    for (let flag = 0; flag < FLAGS_PER_TENANT; flag += 1) {
      await call('POST', `${baseUrl}/v1/flags`, 201, {
        headers: auth,
        body: { key: `flag-${flag}`, name: `Flag ${flag}`, type: 'boolean', value: true },
      });
    }
    made.push({ auth, etag: undefined });
  }
  log(`tenants: ${tenants} organizations, each with a key and ${FLAGS_PER_TENANT} flags`);
  return made;
}

/**
 * Polls every tenant once per `periodMs`, spread evenly, until stopped; counts the answers. The first poll of each
 * takes its ETag, every later one sends it back.
 */
function pollForever({ baseUrl, tenants, periodMs }) {
  const statuses = {};
  let stopped = false;
  let polls = 0;
  const gap = periodMs / tenants.length;
  const started = Date.now();
  const loop = (async () => {
    for (let round = 0; !stopped; round += 1) {
      for (let index = 0; index < tenants.length && !stopped; index += 1) {
        const due = started + round * periodMs + index * gap;
        if (due > Date.now()) await sleep(due - Date.now());
        const tenant = tenants[index];
        const headers = tenant.etag ? { ...tenant.auth, 'If-None-Match': tenant.etag } : tenant.auth;
        fetch(`${baseUrl}/v1/flags/config`, { headers }).then(
          async (response) => {
            await response.arrayBuffer();
            if (response.status === 200) tenant.etag = response.headers.get('etag');
            statuses[response.status] = (statuses[response.status] ?? 0) + 1;
            polls += 1;
          },
          () => {
            statuses.error = (statuses.error ?? 0) + 1;
          },
        );
      }
    }
  })();
  return {
    polls: () => polls,
    statuses: () => ({ ...statuses }),
    stop: async () => {
      stopped = true;
      await loop;
      await sleep(500);
    },
  };
}

async function runTenantsBench({ baseUrl, adminToken, dataDir, log, tenants, periodSeconds, seconds }) {
  const made = await setUpTenants({ baseUrl, adminToken, tenants, log });
  const client = new Client({ connectionString: databaseUrl(dataDir) });
  await client.connect();
  try {
    const load = pollForever({ baseUrl, tenants: made, periodMs: periodSeconds * 1000 });
    // A full period first (every tenant has its ETag and its payload was built once), then the settling pause.
    await sleep(periodSeconds * 1000 + SETTLE_MS);
    const before = { transactions: await transactions(client), polls: load.polls(), statuses: load.statuses() };
    await sleep(seconds * 1000);
    const after = { transactions: await transactions(client), polls: load.polls(), statuses: load.statuses() };
    await load.stop();
    const polls = after.polls - before.polls;
    const spent = after.transactions - before.transactions - 1; // the bench's own read of `after`
    const byStatus = Object.fromEntries(Object.entries(after.statuses).map(([status, count]) => [status, count - (before.statuses[status] ?? 0)]));
    return { tenants, periodSeconds, seconds, polls, transactions: spent, perThousand: (spent * 1000) / polls, byStatus };
  } finally {
    await client.end();
  }
}

function formatTenantsReport(result) {
  return [
    `${result.tenants} organizations, each polled every ${result.periodSeconds} s with If-None-Match, nothing changing, ${result.seconds} s measured`,
    `polls: ${result.polls} (${Object.entries(result.byStatus)
      .map(([status, count]) => `${count} × ${status}`)
      .join(', ')})`,
    `database transactions: ${result.transactions}, that is ${result.perThousand.toFixed(1)} per 1,000 polls`,
  ].join('\n');
}

module.exports = { runTenantsBench, formatTenantsReport };
