import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import request from 'supertest';
import { bearer } from '../factories/organizations.factory';
import { pathOf } from '../factories/storage.factory';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** Whether `100 Continue` came before the answer. */
  continued: boolean;
  /** How many bytes of the body the client had handed to its connection when the answer came. */
  sent: number;
}

/** How the client sends its body: all at once, in 64 KB pieces as across a network, or after `100 Continue`. */
type Sending = 'whole' | 'paced' | 'after-continue';

/**
 * A refused request is answered, then its connection lingers (reads and discards the rest of the body, for at most
 * 2 s or 4 MB) before it closes, as HTTP servers close: a client still sending its body reads the answer instead of
 * a reset (`write ECONNRESET`). HTTP_REQUEST_TIMEOUT_SECONDS is 1 here, to show the request's own timer stops at
 * its answer.
 */
describe('bodies refused before they are read', () => {
  const { t, org } = useTestApp({ env: { HTTP_REQUEST_TIMEOUT_SECONDS: '1' } });

  /** A Node http.request on a connection of its own; rejects with the client's error (a reset before the answer). */
  function exchange(method: string, path: string, headers: Record<string, string | number>, body: Buffer, sending: Sending): Promise<Answer> {
    const { port } = t.http.address() as { port: number };
    return new Promise((resolve, reject) => {
      const expect = sending === 'after-continue' ? { Expect: '100-continue' } : {};
      const outgoing = httpRequest({
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { 'Content-Length': body.length, ...expect, ...headers },
      });
      let continued = false;
      let answered = false;
      let sent = 0;
      const write = (chunk: Buffer, next?: () => void) => {
        sent += chunk.length;
        outgoing.write(chunk, (error) => (error || answered ? undefined : next?.()));
      };
      outgoing.on('response', (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode!, headers: response.headers, body: text ? JSON.parse(text) : null, continued, sent });
        });
      });
      outgoing.on('error', (error) => (answered ? undefined : reject(error)));
      if (sending === 'whole') {
        sent = body.length;
        return void outgoing.end(body);
      }
      if (sending === 'after-continue') {
        outgoing.on('continue', () => {
          continued = true;
          sent = body.length;
          outgoing.end(body);
        });
        return;
      }
      let offset = 0;
      const next = (): void => {
        if (offset >= body.length) return void outgoing.end();
        const piece = body.subarray(offset, (offset += 64 * 1024));
        write(piece, () => setTimeout(next, 1));
      };
      next();
    });
  }

  /** A flag whose JSON is `bytes` long (about). */
  const flagOf = (bytes: number) => Buffer.from(JSON.stringify({ key: 'big', name: 'n', type: 'string', value: 'x'.repeat(bytes) }));
  const json = (key: string) => ({ ...bearer(key), 'Content-Type': 'application/json' });

  it('answers a 2 MB JSON body with a 413 the client reads, 50 times in a row, each on a new connection', async () => {
    const body = flagOf(2 * 1024 * 1024);
    const outcomes: string[] = [];
    for (let i = 0; i < 50; i += 1) {
      const sending = i % 2 === 0 ? 'paced' : 'whole';
      const outcome = await exchange('POST', '/v1/flags', json(org.key), body, sending).then(
        (answer) => {
          expectApiError(answer, 413, 'PAYLOAD_TOO_LARGE', /^Request body must be at most 256kb$/);
          expect(answer.headers.connection).toBe('close');
          return String(answer.status);
        },
        (error: Error) => `${sending}: ${error.message}`,
      );
      outcomes.push(outcome);
    }
    expect(outcomes).toEqual(Array.from({ length: 50 }, () => '413'));
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
    expect(rows[0].n).toBe(0);
  });

  it('answers uploads refused before their first byte is read in a way the client reads: a bad signature, a size over the signed one', async () => {
    const signed = await request(t.http).get('/v1/storage/signed-url?contentType=image/png&size=3').set(bearer(org.key)).expect(200);
    const tampered = pathOf(signed.body.url.replace(/signature=[^&]+/, 'signature=AAAA'));
    const body = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < 10; i += 1) {
      const refused = await exchange('PUT', tampered, { 'Content-Type': 'image/png' }, body, 'paced');
      expectStorageError(refused, 403, 'FORBIDDEN');
      expect(refused.headers.connection).toBe('close');
      const tooLarge = await exchange('PUT', pathOf(signed.body.url), { 'Content-Type': 'image/png' }, body, 'paced');
      expectStorageError(tooLarge, 413, 'PAYLOAD_TOO_LARGE', /3 bytes/);
    }
    // The URL was never used: it still takes its 3 bytes.
    await request(signed.body.url).put('').set('Content-Type', 'image/png').send(Buffer.from('abc')).expect(200);
  });

  describe('Expect: 100-continue', () => {
    it('answers a declared length over the route’s limit with 413 and no 100 Continue: the body is never sent', async () => {
      const answer = await exchange('POST', '/v1/flags', json(org.key), flagOf(300 * 1024), 'after-continue');
      expect(answer.continued).toBe(false);
      expect(answer.sent).toBe(0);
      expectApiError(answer, 413, 'PAYLOAD_TOO_LARGE', /^Request body must be at most 256kb$/);
    });

    it('answers a length within the limit with 100 Continue, then as usual', async () => {
      const body = Buffer.from(JSON.stringify({ key: 'small', name: 'n', type: 'boolean', value: true }));
      const answer = await exchange('POST', '/v1/flags', json(org.key), body, 'after-continue');
      expect(answer).toMatchObject({ continued: true, status: 201, body: { key: 'small', value: true } });
    });

    it('goes by the route’s own limit: 1 MB is over the API’s 256 KB but within the import’s 2 MB', async () => {
      // Valid JSON of 1 MB: an empty import, padded with whitespace.
      const body = Buffer.from(`{"flags":[],"dryRun":true}${' '.repeat(1024 * 1024)}`);
      const imported = await exchange('POST', '/v1/flags/import', json(org.key), body, 'after-continue');
      expect(imported).toMatchObject({ continued: true, status: 200, body: { created: [], updated: [], unchanged: [], refused: [] } });
      const created = await exchange('POST', '/v1/flags', json(org.key), body, 'after-continue');
      expect(created).toMatchObject({ continued: false, status: 413 });
    });

    it('answers an upload with 100 Continue: the upload checks its own limits', async () => {
      const signed = await request(t.http).get('/v1/storage/signed-url?contentType=image/png&size=3').set(bearer(org.key)).expect(200);
      const answer = await exchange('PUT', pathOf(signed.body.url), { 'Content-Type': 'image/png' }, Buffer.from('abc'), 'after-continue');
      expect(answer).toMatchObject({ continued: true, status: 200, body: { size: 3 } });
    });
  });

  interface RawPost {
    received(): string;
    /** Body bytes the connection took. */
    written(): number;
    /** Sends a piece of the body; false once the connection no longer takes it. */
    send(chunk: Buffer): Promise<boolean>;
    /** When the server's side was gone for good: a write failed (EPIPE, ECONNRESET) or the socket closed. */
    cut: Promise<number>;
  }

  /** A raw POST /v1/flags that goes on sending after the server's end (half-open), as a client that writes before it reads. */
  async function rawPost(declared: number): Promise<RawPost> {
    const { port } = t.http.address() as { port: number };
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    let written = 0;
    socket.on('data', (chunk) => (received += chunk.toString()));
    const cut = new Promise<number>((resolve) => {
      socket.once('error', () => resolve(Date.now()));
      socket.once('close', () => resolve(Date.now()));
    });
    const head = Object.entries({ ...json(org.key), Host: 'localhost', 'Content-Length': declared })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /v1/flags HTTP/1.1\r\n${head}\r\n\r\n`);
    const send = (chunk: Buffer) =>
      new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(false);
        socket.write(chunk, (error) => {
          if (!error) written += chunk.length;
          resolve(!error);
        });
      });
    return { received: () => received, written: () => written, send, cut };
  }

  /** Sends `chunk` again and again, `gapMs` apart, until the connection is cut. */
  async function keepSending(connection: RawPost, chunk: Buffer, gapMs: number): Promise<void> {
    let open = true;
    void connection.cut.then(() => (open = false));
    while (open && (await connection.send(chunk))) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }

  it('cuts a client that keeps sending after at most 4 MB more, having answered it', async () => {
    const connection = await rawPost(100 * 1024 * 1024);
    await keepSending(connection, Buffer.alloc(64 * 1024), 0);
    await connection.cut;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 413 [^]*\r\nConnection: close\r\n/);
    // It sent past the 4 MB the server reads after its answer (the rest was refused by a reset, as nginx's is).
    expect(connection.written()).toBeGreaterThan(4 * 1024 * 1024);
    expect(connection.written()).toBeLessThan(100 * 1024 * 1024);
  });

  it('lingers past the request timeout (its timer stopped at the answer), then closes after 2 s', async () => {
    const started = Date.now();
    const connection = await rawPost(1024 * 1024);
    await keepSending(connection, Buffer.alloc(16), 100);
    const cut = await connection.cut;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 413 /);
    // HTTP_REQUEST_TIMEOUT_SECONDS (1 s) would have cut it at 1 s; the lingering close's 2 s did.
    expect(cut - started).toBeGreaterThanOrEqual(1_900);
    expect(cut - started).toBeLessThan(20_000);
  });
});
