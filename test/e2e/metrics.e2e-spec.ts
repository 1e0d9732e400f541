import request from 'supertest';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { post, signedUrl, uploadFile } from '../factories/storage.factory';
import { eventually } from '../support/eventually';
import { freePort } from '../../src/common/free-port';
import { expectApiError } from '../support/expect-error';
import { scrapeMetrics, TEST_METRICS_TOKEN } from '../support/metrics';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

/** The value of one series in Prometheus text, 0 when absent. `labels` as written: `outcome="200"`. */
function sample(text: string, name: string, labels = ''): number {
  const series = labels ? `${name}{${labels}}` : name;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function scrape(t: TestApp): Promise<string> {
  const { text, contentType } = await scrapeMetrics(t);
  expect(contentType).toMatch(/^text\/plain;.*version=0\.0\.4/);
  return text;
}

/** A plain HTTP exchange with the internal listener, as Prometheus has it. */
async function internal(port: number, method: string, path: string): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('metrics', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp({ CONFIG_RATE_LIMIT_PER_MINUTE: '3', METRICS_PORT: String(await freePort()) });
    org = await createOrganization(t);
  });
  afterAll(() => t.close());

  it('serves the default process metrics and every series of the service on METRICS_PORT, without a token', async () => {
    const text = await scrape(t);
    for (const name of [
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'http_requests_total',
      'http_request_duration_seconds',
      'flagstore_config_polls_total',
      'flagstore_config_payload_rebuilds_total',
      'flagstore_stream_connections',
      'flagstore_upload_bytes_total',
      'flagstore_upload_failures_total',
      'flagstore_db_pool_connections',
      'flagstore_invalidation_bus_lag_seconds',
      'flagstore_rate_limit_fallback_hits_total',
      'flagstore_rate_limit_store_outages_total',
      'flagstore_outbox_deliveries_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(sample(text, 'flagstore_stream_connections')).toBe(0);
    expect(sample(text, 'flagstore_db_pool_connections', 'state="total"')).toBeGreaterThan(0);
    await request(t.http).get('/v1/metrics').expect(404);
  });

  it('counts config polls by outcome (200, 304, 429) and payload rebuilds', async () => {
    await createFlag(t, org.key, { key: 'double-xp' });
    const before = await scrape(t);
    const first = await api(t, org.key).get('/flags/config').expect(200);
    await api(t, org.key).get('/flags/config').set('If-None-Match', first.headers.etag).expect(304);
    await api(t, org.key).get('/flags/config').expect(200);
    await api(t, org.key).get('/flags/config').expect(429);
    const after = await scrape(t);
    const moved = (outcome: string) =>
      sample(after, 'flagstore_config_polls_total', `outcome="${outcome}"`) - sample(before, 'flagstore_config_polls_total', `outcome="${outcome}"`);
    expect([moved('200'), moved('304'), moved('429')]).toEqual([2, 1, 1]);
    expect(sample(after, 'flagstore_config_payload_rebuilds_total')).toBeGreaterThan(sample(before, 'flagstore_config_payload_rebuilds_total'));
    // The lean poll is counted by outcome only: no per-request series of its own.
    expect(after).not.toContain('route="/v1/flags/config"');
  });

  it('counts and times requests by route pattern and status, never by URL', async () => {
    const flag = await createFlag(t, org.key, { key: 'by-route' });
    const series = 'method="GET",route="/v1/flags/:flagId",status="200"';
    const before = await scrape(t);
    await api(t, org.key).get(`/flags/${flag.id}`).expect(200);
    await api(t, org.key).get(`/flags/${flag.id}`).expect(200);
    const after = await scrape(t);
    expect(sample(after, 'http_requests_total', series) - sample(before, 'http_requests_total', series)).toBe(2);
    expect(sample(after, 'http_request_duration_seconds_count', series) - sample(before, 'http_request_duration_seconds_count', series)).toBe(2);
    expect(after).not.toContain(flag.id);
    await request(t.http).get('/no/such/route').expect(404);
    expect(await scrape(t)).toContain('http_requests_total{method="GET",route="unmatched",status="404"}');
  });

  it('counts upload bytes and failures, and shows no key, token, id or signed-URL query', async () => {
    const before = await scrape(t);
    const uploaded = await uploadFile(t, org, Buffer.alloc(1234, 7), 'image/png');
    const signed = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
    await request(t.http)
      .put(new URL(signed.url).pathname + new URL(signed.url).search)
      .set('Content-Type', 'image/png')
      .send(Buffer.alloc(11))
      .expect(413);
    const nonAllocated = await signedUrl(t, org);
    await post(t, nonAllocated.url, Buffer.alloc(0)).field('unexpected', 'x');
    const after = await scrape(t);
    expect(sample(after, 'flagstore_upload_bytes_total') - sample(before, 'flagstore_upload_bytes_total')).toBe(1234);
    const failures = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('flagstore_upload_failures_total{'))
        .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
    expect(failures(after) - failures(before)).toBeGreaterThanOrEqual(2);
    expect(after).toContain('flagstore_upload_failures_total{code="PAYLOAD_TOO_LARGE"}');
    for (const secret of [org.key, org.id, uploaded.id, new URL(signed.url).search.slice(1), new URL(nonAllocated.url).search.slice(1)]) {
      expect(after).not.toContain(secret);
    }
    expect(after).not.toMatch(/signature|Bearer|\?/);
  });
});

describe('metrics across two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ METRICS_TOKEN: TEST_METRICS_TOKEN }, { sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('observes the invalidation bus lag when a message from another instance arrives', async () => {
    const org = await createOrganization(a);
    const received = async () => sample(await scrape(b), 'flagstore_invalidation_bus_lag_seconds_count');
    const before = await received();
    await createFlag(a, org.key, { key: 'heard-elsewhere' });
    await eventually(async () => (await received()) > before, { what: 'a lag observation on the other instance' });
  });
});

describe('metrics on the public listener', () => {
  it('are not served there without METRICS_TOKEN, with or without METRICS_PORT, nor in its OpenAPI document', async () => {
    const metricsPort = await freePort();
    for (const env of [{}, { METRICS_PORT: String(metricsPort) }] as Record<string, string>[]) {
      const t = await createTestApp(env);
      try {
        for (const authorization of [undefined, 'Bearer anything-at-all', `Bearer ${TEST_ADMIN_TOKEN}`]) {
          const answer = request(t.http).get('/metrics');
          if (authorization) answer.set('Authorization', authorization);
          const refused = await answer;
          expectApiError(refused, 404, 'NOT_FOUND');
          expect(refused.text).not.toContain('# TYPE');
        }
        const document = await request(t.http).get('/docs-json').expect(200);
        expect(Object.keys(document.body.paths)).not.toContain('/metrics');
      } finally {
        await t.close();
      }
    }
  });
});

describe('the internal metrics listener (METRICS_PORT)', () => {
  let t: TestApp;
  let port: number;
  let closed = false;

  beforeAll(async () => {
    port = await freePort();
    t = await createTestApp({ METRICS_PORT: String(port), METRICS_TOKEN: TEST_METRICS_TOKEN });
  });
  afterAll(async () => {
    if (!closed) await t.close();
  });

  it('serves GET and HEAD /metrics without a token, and nothing else', async () => {
    const scraped = await internal(port, 'GET', '/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    expect(scraped.headers.get('cache-control')).toBe('no-store');
    expect(scraped.text).toContain('# TYPE flagstore_config_polls_total counter');
    expect(await internal(port, 'GET', '/metrics?debug=1')).toMatchObject({ status: 200 });
    expect(await internal(port, 'HEAD', '/metrics')).toMatchObject({ status: 200, text: '' });

    const post = await internal(port, 'POST', '/metrics');
    expect(post).toMatchObject({ status: 405 });
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    for (const path of ['/', '/health', '/v1/flags', '/docs-json', '/metrics/x', '/v1/admin/organizations']) {
      expect({ path, status: (await internal(port, 'GET', path)).status }).toEqual({ path, status: 404 });
    }
  });

  it('leaves the public listener its own rule: with METRICS_TOKEN, /metrics there needs the token', async () => {
    await request(t.http).get('/metrics').expect(401);
    await request(t.http).get('/metrics').set('Authorization', `Bearer ${TEST_METRICS_TOKEN}`).expect(200);
  });

  it('closes with the app', async () => {
    closed = true;
    await t.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

describe('metrics with METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789abcdefghijklmnop';
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    await request(t.http).get('/metrics').expect(401);
    await request(t.http).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`).expect(401);
    await request(t.http).get('/metrics').set('Authorization', TOKEN).expect(401);
    const scraped = await request(t.http).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(scraped.text).toContain('# TYPE flagstore_config_polls_total counter');
    expect(scraped.text).not.toContain(TOKEN);
  });

  it('documents the route with its bearer token in the OpenAPI document', async () => {
    const document = await request(t.http).get('/docs-json').expect(200);
    const operation = document.body.paths['/metrics'].get;
    expect(operation.security).toEqual([{ metricsToken: [] }]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '401']));
    expect(operation.description).toMatch(/METRICS_TOKEN/);
    expect(document.body.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('keeps health open', async () => {
    await request(t.http).get('/health/live').expect(200);
  });
});
