import { createHash } from 'node:crypto';
import { connect, Socket } from 'node:net';
import request from 'supertest';
import { bearer, createOrganization } from '../factories/organizations.factory';
import { bytes, createStorageTestApp, post, rawRequest, RawUpload, signedUrl, StorageTestApp, temporaryFiles } from '../factories/storage.factory';
import { eventually } from '../support/eventually';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { scrapeMetrics, TEST_METRICS_TOKEN } from '../support/metrics';

const sha256 = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The server's timeouts, made short (1 s for a request and for an upload's silence, 2 s for an idle keep-alive
 * connection) so that each is seen to act within a few seconds. Node's own 300 s request timeout is off: uploads
 * are limited by their silence, not their length.
 */
describe('HTTP timeouts', () => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp('local', {
      HTTP_REQUEST_TIMEOUT_SECONDS: '1',
      UPLOAD_IDLE_TIMEOUT_SECONDS: '1',
      HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '2',
      METRICS_TOKEN: TEST_METRICS_TOKEN,
    });
  });
  afterAll(() => t.close());

  const port = () => (t.http.address() as { port: number }).port;
  const item = async (id: string) => (await t.db.query('SELECT state, upload_claimed_at FROM storage_items WHERE id = $1', [id])).rows[0];
  const nonces = async (organizationId: string) =>
    (await t.db.query('SELECT 1 FROM storage_upload_nonces WHERE organization_id = $1', [organizationId])).rowCount;
  const failures = async () => {
    const { text } = await scrapeMetrics(t);
    return Number(/^flagstore_upload_failures_total\{code="REQUEST_TIMEOUT"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };

  /** Sends `body` in `pieces` chunks, `gapMs` apart. */
  async function paced(upload: RawUpload, body: Buffer, pieces: number, gapMs: number): Promise<void> {
    const size = Math.ceil(body.length / pieces);
    for (let offset = 0; offset < body.length; offset += size) {
      await upload.write(body.subarray(offset, offset + size));
      await pause(gapMs);
    }
  }

  it('sets the server timeouts from the configuration, with Node’s total request timeout off', () => {
    expect(t.http.keepAliveTimeout).toBe(2_000);
    expect(t.http.headersTimeout).toBe(1_000);
    expect(t.http.requestTimeout).toBe(0);
  });

  it('stores a paced 20 MB upload that takes longer than the request timeout, since bytes keep coming', async () => {
    const org = await createOrganization(t);
    const body = bytes(20 * 1024 * 1024);
    const signed = await signedUrl(t, org, { contentType: 'video/mp4', size: body.length });
    const upload = rawRequest(t, 'PUT', signed.url, { 'Content-Type': 'video/mp4', 'Content-Length': String(body.length) });
    const started = Date.now();
    await paced(upload, body, 25, 100); // about 2.5 s in all, never more than 0.1 s of silence
    const answer = await upload.finish();
    expect(Date.now() - started).toBeGreaterThan(2_000);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: signed.mediaId, size: body.length, state: 'complete' });
    expect((await t.db.query('SELECT checksum FROM storage_items WHERE id = $1', [signed.mediaId])).rows[0].checksum).toBe(sha256(body));
  });

  it('cuts off a stalled pre-allocated upload with 408, stores nothing and gives the URL back', async () => {
    const org = await createOrganization(t);
    const body = bytes(1024 * 1024);
    const signed = await signedUrl(t, org, { contentType: 'image/png', size: body.length });
    const before = await failures();
    const upload = rawRequest(t, 'PUT', signed.url, { 'Content-Type': 'image/png', 'Content-Length': String(body.length) });
    const started = Date.now();
    await upload.write(body.subarray(0, 100_000));
    const answer = await upload.answer; // the body is never finished
    const waited = Date.now() - started;
    expectStorageError(answer, 408, 'REQUEST_TIMEOUT', /No byte of the upload arrived for 1 s/);
    expect(answer.headers.connection).toBe('close');
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(5_000);

    await eventually(async () => (await item(signed.mediaId!)).upload_claimed_at === null, { timeoutMs: 5_000 });
    expect(await item(signed.mediaId!)).toEqual({ state: 'pending', upload_claimed_at: null });
    await eventually(async () => (await temporaryFiles(t)).length === 0, { timeoutMs: 5_000 });
    await eventually(async () => (await failures()) === before + 1, { timeoutMs: 5_000 });

    const retried = await request(t.http)
      .put(new URL(signed.url).pathname + new URL(signed.url).search)
      .set('Content-Type', 'image/png')
      .send(body);
    expect(retried.status).toBe(200);
  });

  it('cuts off a stalled multipart upload with 408 and gives its nonce back', async () => {
    const org = await createOrganization(t);
    const signed = await signedUrl(t, org);
    const boundary = 'flagstore-timeout-boundary';
    const upload = rawRequest(t, 'POST', signed.url, { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
    await upload.write(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: image/png\r\n\r\n`),
    );
    await upload.write(bytes(200_000));
    expectStorageError(await upload.answer, 408, 'REQUEST_TIMEOUT', /No byte of the upload arrived/);
    await eventually(async () => (await nonces(org.id)) === 0, { timeoutMs: 5_000 });
    expect((await t.db.query('SELECT 1 FROM storage_items WHERE organization_id = $1', [org.id])).rowCount).toBe(0);
    expect((await post(t, signed.url, bytes(1_000))).status).toBe(201);
  });

  it('cuts off a JSON body that has not arrived whole within the request timeout, even while bytes keep coming', async () => {
    const org = await createOrganization(t);
    const json = Buffer.from(JSON.stringify({ key: 'slow-flag', name: 'Slow', type: 'boolean', value: true, description: 'x'.repeat(60) }));
    const create = rawRequest(t, 'POST', `${t.config.urls.baseUrl}/flags`, {
      ...bearer(org.key),
      'Content-Type': 'application/json',
      'Content-Length': String(json.length),
    });
    const started = Date.now();
    let answered = false;
    const trickle = (async () => {
      // One byte every 100 ms: never 1 s of silence, but the whole body would take over 10 s.
      for (let offset = 0; offset < json.length - 1 && !answered; offset++) {
        await create.write(json.subarray(offset, offset + 1)).catch(() => undefined);
        await pause(100);
      }
    })();
    const answer = await create.answer;
    answered = true;
    expect(Date.now() - started).toBeLessThan(5_000);
    expectApiError(answer, 408, 'REQUEST_TIMEOUT', /did not arrive within 1 s/);
    expect(answer.headers.connection).toBe('close');
    create.abort();
    await trickle;
    const flags = await request(t.http).get('/v1/flags').set(bearer(org.key)).expect(200);
    expect(flags.body).toMatchObject({ results: [], total: 0 });
  });

  it('leaves a JSON body that arrives within the request timeout alone', async () => {
    const org = await createOrganization(t);
    const json = Buffer.from(JSON.stringify({ key: 'paced-flag', name: 'Paced', type: 'boolean', value: true }));
    const create = rawRequest(t, 'POST', `${t.config.urls.baseUrl}/flags`, {
      ...bearer(org.key),
      'Content-Type': 'application/json',
      'Content-Length': String(json.length),
    });
    await create.write(json.subarray(0, 10));
    await pause(500);
    await create.write(json.subarray(10));
    expect((await create.finish()).status).toBe(201);
  });

  /** A raw connection: what the server wrote, and when it closed it. */
  function rawConnection(): { socket: Socket; received: () => string; closed: Promise<number> } {
    const socket = connect(port(), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const opened = Date.now();
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
    return { socket, received: () => received, closed };
  }

  it('answers headers that do not arrive within the request timeout with 408 and closes the connection', async () => {
    const connection = rawConnection();
    connection.socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n'); // the blank line never comes
    const after = await connection.closed;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(after).toBeGreaterThanOrEqual(900);
    expect(after).toBeLessThan(4_000);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout, and not before', async () => {
    const connection = rawConnection();
    connection.socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await eventually(() => connection.received().includes('\r\n\r\n'), { timeoutMs: 5_000 });
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 [^]*Keep-Alive: timeout=2/i);
    await pause(1_000);
    // Still open a second later: a second request on it is answered.
    connection.socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await eventually(() => connection.received().split('HTTP/1.1 200').length === 3, { timeoutMs: 5_000 });
    const after = await connection.closed;
    expect(after).toBeGreaterThanOrEqual(2_900); // 1 s, then 2 s idle after the second answer
    expect(after).toBeLessThan(6_000);
  });
});
