import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../common/free-port';
import * as addressPolicy from './address-policy';
import { checkWebhookUrl, Lookup } from './webhook-url';
import { MAX_WEBHOOK_BODY_BYTES, postWebhook, RESPONSE_EXCERPT_BYTES, WebhookPost, WebhookSendError } from './webhook-sender';

interface Hit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver on 127.0.0.1 that records every request and every connection it gets. */
interface Receiver {
  base: string;
  port: number;
  hits: Hit[];
  connections: number;
}

const servers: Server[] = [];

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function receiver(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<Receiver> {
  const hits: Hit[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      hits.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString() });
      answer(request, response);
    });
  });
  const state = { base: '', port: 0, hits, connections: 0 };
  server.on('connection', () => state.connections++);
  state.port = await listen(server);
  state.base = `http://127.0.0.1:${state.port}`;
  return state;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function post(overrides: Partial<WebhookPost> & { url: string }): WebhookPost {
  return { headers: {}, body: '{"type":"webhook.test"}', timeoutMs: 5_000, allowPrivate: true, ...overrides };
}

async function sendError(attempt: Promise<unknown>): Promise<WebhookSendError> {
  const error = await attempt.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WebhookSendError);
  return error as WebhookSendError;
}

const answerWith =
  (status: number, body = '', headers: Record<string, string> = {}) =>
  (_: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, headers);
    response.end(body);
  };

const lookupOf =
  (...addresses: string[]): Lookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('postWebhook', () => {
  it('posts the body with its headers and gives the status, duration and excerpt of the answer', async () => {
    const target = await receiver(answerWith(202, 'accepted'));
    const response = await postWebhook(
      post({ url: `${target.base}/hooks/in?team=7`, headers: { 'webhook-id': 'evt_1', 'user-agent': 'spoofed' }, body: '{"ok":true}' }),
    );
    expect(response).toEqual({ status: 202, durationMs: expect.any(Number), excerpt: 'accepted' });
    expect(response.durationMs).toBeGreaterThanOrEqual(0);
    expect(target.hits).toHaveLength(1);
    expect(target.hits[0]).toMatchObject({
      method: 'POST',
      url: '/hooks/in?team=7',
      body: '{"ok":true}',
      headers: {
        'content-type': 'application/json',
        'content-length': '11',
        'user-agent': 'Flagstore-Webhooks/1',
        'webhook-id': 'evt_1',
      },
    });
  });

  it('sends user info as Basic credentials', async () => {
    const target = await receiver(answerWith(204));
    await postWebhook(post({ url: `http://alice:hunter%202@127.0.0.1:${target.port}/` }));
    expect(target.hits[0].headers.authorization).toBe(`Basic ${Buffer.from('alice:hunter 2').toString('base64')}`);
    await postWebhook(post({ url: `http://bob:100%zz@127.0.0.1:${target.port}/` }));
    expect(target.hits[1].headers.authorization).toBe(`Basic ${Buffer.from('bob:100%zz').toString('base64')}`);
  });

  it('answers a 500 with the first 1,024 bytes of a 10 KB body', async () => {
    const target = await receiver(answerWith(500, 'x'.repeat(10 * 1024)));
    const response = await postWebhook(post({ url: target.base }));
    expect(response.status).toBe(500);
    expect(response.excerpt).toBe('x'.repeat(RESPONSE_EXCERPT_BYTES));
  });

  it('cuts the excerpt before a character split by the 1,024-byte limit', async () => {
    const target = await receiver(answerWith(400, 'a' + 'é'.repeat(1000)));
    const response = await postWebhook(post({ url: target.base }));
    expect(response.excerpt).toBe('a' + 'é'.repeat(511));
  });

  it('stops reading after the excerpt instead of downloading an endless answer', async () => {
    const target = await receiver((_, response) => {
      response.writeHead(200);
      response.write('y'.repeat(4096));
      // ...and never ends.
    });
    const response = await postWebhook(post({ url: target.base, timeoutMs: 10_000 }));
    expect(response).toMatchObject({ status: 200, excerpt: 'y'.repeat(RESPONSE_EXCERPT_BYTES) });
    expect(response.durationMs).toBeLessThan(5_000);
  });

  it('does not follow a redirect: a 302 is the answer', async () => {
    const elsewhere = await receiver(answerWith(200));
    const target = await receiver(answerWith(302, 'moved', { location: `${elsewhere.base}/stolen` }));
    const response = await postWebhook(post({ url: target.base }));
    expect(response).toMatchObject({ status: 302, excerpt: 'moved' });
    expect(elsewhere.connections).toBe(0);
    expect(elsewhere.hits).toHaveLength(0);
  });

  it('gives up on a receiver that never answers after timeoutMs', async () => {
    const target = await receiver(() => undefined);
    const error = await sendError(postWebhook(post({ url: target.base, timeoutMs: 200 })));
    expect(error).toMatchObject({ reason: 'timeout', refusedAddress: false });
    expect(error.message).toBe(`POST ${target.base}/ failed: no answer within 200 ms`);
    expect(error.durationMs).toBeGreaterThanOrEqual(190);
    expect(error.durationMs).toBeLessThan(2_000);
    expect(target.hits).toHaveLength(1);
  });

  it('counts the time spent resolving the host within timeoutMs', async () => {
    const never: Lookup = () => new Promise(() => undefined);
    const error = await sendError(postWebhook(post({ url: 'https://slow-dns.example/', timeoutMs: 100, lookup: never })));
    expect(error.reason).toBe('timeout');
  });

  it('keeps the status when the body is still coming at timeoutMs', async () => {
    const target = await receiver((_, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const response = await postWebhook(post({ url: target.base, timeoutMs: 200 }));
    expect(response).toMatchObject({ status: 200, excerpt: 'partial' });
    expect(response.durationMs).toBeGreaterThanOrEqual(190);
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    const target = await receiver(() => controller.abort());
    const error = await sendError(postWebhook(post({ url: target.base, signal: controller.signal })));
    expect(error).toMatchObject({ reason: 'aborted', refusedAddress: false });
  });

  it('does not connect when the signal has already aborted', async () => {
    const target = await receiver(answerWith(200));
    const error = await sendError(postWebhook(post({ url: target.base, signal: AbortSignal.abort() })));
    expect(error.reason).toBe('aborted');
    expect(target.connections).toBe(0);
  });

  it('refuses a body over 256 KB before connecting, counting bytes rather than characters', async () => {
    const target = await receiver(answerWith(200));
    const tooLong = await sendError(postWebhook(post({ url: target.base, body: 'x'.repeat(MAX_WEBHOOK_BODY_BYTES + 1) })));
    expect(tooLong).toMatchObject({ reason: 'body-too-large', refusedAddress: false });
    expect(tooLong.message).not.toContain('xxxx');
    const wide = await sendError(postWebhook(post({ url: target.base, body: 'é'.repeat(MAX_WEBHOOK_BODY_BYTES / 2 + 1) })));
    expect(wide.reason).toBe('body-too-large');
    expect(target.connections).toBe(0);

    const atLimit = await postWebhook(post({ url: target.base, body: 'x'.repeat(MAX_WEBHOOK_BODY_BYTES) }));
    expect(atLimit.status).toBe(200);
    expect(target.hits[0].body).toHaveLength(MAX_WEBHOOK_BODY_BYTES);
  });

  it('fails with "connect" when nothing listens', async () => {
    const port = await freePort();
    const error = await sendError(postWebhook(post({ url: `http://127.0.0.1:${port}/` })));
    expect(error).toMatchObject({ reason: 'connect', refusedAddress: false });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('fails with "no-answer" when the receiver hangs up without answering', async () => {
    const target = await receiver((request) => request.socket.destroy());
    const error = await sendError(postWebhook(post({ url: target.base })));
    expect(error.reason).toBe('no-answer');
  });

  it('fails with "dns" when the host does not resolve', async () => {
    const missing: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const error = await sendError(postWebhook(post({ url: 'https://nowhere.example/', lookup: missing })));
    expect(error).toMatchObject({ reason: 'dns', message: 'POST https://nowhere.example/ failed: nowhere.example does not resolve (ENOTFOUND)' });
    const empty = await sendError(postWebhook(post({ url: 'https://nowhere.example/', lookup: lookupOf() })));
    expect(empty.reason).toBe('dns');
  });

  describe('the address policy', () => {
    it.each([
      ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/`],
      ['localhost, resolved', (port: number) => `http://localhost:${port}/`],
      ['[::1]', (port: number) => `http://[::1]:${port}/`],
      ['2130706433', (port: number) => `http://2130706433:${port}/`],
      ['[::ffff:127.0.0.1]', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ])('refuses loopback (%s) unless private addresses are allowed, without connecting', async (_, urlFor) => {
      const target = await receiver(answerWith(200));
      const error = await sendError(postWebhook(post({ url: urlFor(target.port), allowPrivate: false })));
      expect(error).toMatchObject({ reason: 'refused-address', refusedAddress: true });
      expect(error.message).toMatch(/refused: .*a loopback address/);
      expect(target.connections).toBe(0);
    });

    it.each(['127.0.0.1', 'localhost', '2130706433'])('connects to loopback (%s) when private addresses are allowed', async (host) => {
      const target = await receiver(answerWith(200, 'ok'));
      const response = await postWebhook(post({ url: `http://${host}:${target.port}/`, allowPrivate: true }));
      expect(response).toMatchObject({ status: 200, excerpt: 'ok' });
    });

    it('connects to the address its lookup gives, keeping the host name', async () => {
      const target = await receiver(answerWith(200));
      await postWebhook(post({ url: `http://receiver.example:${target.port}/`, allowPrivate: true, lookup: lookupOf('127.0.0.1') }));
      expect(target.hits[0].headers.host).toBe(`receiver.example:${target.port}`);
    });

    it('judges the address it connects to, not the one the URL was checked with (DNS rebinding)', async () => {
      const target = await receiver(answerWith(200));
      let lookups = 0;
      const rebinding: Lookup = async () => [{ address: ++lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      const url = `http://rebind.example:${target.port}/`;

      expect(await checkWebhookUrl(url, { allowHttp: true, allowPrivate: false }, rebinding)).toBeNull();
      const error = await sendError(postWebhook(post({ url, allowPrivate: false, lookup: rebinding })));
      expect(error).toMatchObject({ reason: 'refused-address', refusedAddress: true });
      expect(error.message).toBe(`POST ${url} refused: rebind.example resolves to a loopback address (127.0.0.1)`);
      expect(lookups).toBe(2);
      expect(target.connections).toBe(0);
    });

    it('judges the connected socket too, before a byte of the request is written', async () => {
      // The second guard, for an address that reached the socket without the lookup's judgement: here the policy
      // lets the lookup's answer through once, as if Node had connected without calling it.
      const real = addressPolicy.forbiddenRange;
      const judged: string[] = [];
      const spy = jest.spyOn(addressPolicy, 'forbiddenRange').mockImplementation((address) => {
        judged.push(address);
        return judged.length === 1 ? null : real(address);
      });
      try {
        const target = await receiver(answerWith(200));
        const received: Buffer[] = [];
        const closed = new Promise((resolve) =>
          servers[servers.length - 1].on('connection', (socket) => {
            socket.on('data', (chunk: Buffer) => received.push(chunk));
            socket.on('close', resolve);
          }),
        );
        const error = await sendError(
          postWebhook(post({ url: `http://guard.example:${target.port}/`, allowPrivate: false, lookup: lookupOf('127.0.0.1') })),
        );
        expect(error).toMatchObject({ reason: 'refused-address', message: expect.stringContaining('connected to 127.0.0.1, a loopback address') });
        expect(judged).toEqual(['127.0.0.1', '127.0.0.1']);
        await closed;
        expect(target.connections).toBe(1);
        expect(Buffer.concat(received).length).toBe(0);
        expect(target.hits).toHaveLength(0);
      } finally {
        spy.mockRestore();
      }
    });

    it('refuses a host when any of its addresses is forbidden', async () => {
      const target = await receiver(answerWith(200));
      const error = await sendError(
        postWebhook(post({ url: `http://mixed.example:${target.port}/`, allowPrivate: false, lookup: lookupOf('93.184.216.34', '127.0.0.1') })),
      );
      expect(error.reason).toBe('refused-address');
      expect(target.connections).toBe(0);
    });

    it.each([
      ['169.254.169.254', 'a metadata address'],
      ['10.1.2.3', 'a private address'],
      ['::ffff:192.168.0.1', 'a private address'],
      ['fe80::1', 'a link-local address'],
    ])('refuses %s as %s', async (address, described) => {
      const error = await sendError(postWebhook(post({ url: 'https://inside.example/', allowPrivate: false, lookup: lookupOf(address) })));
      expect(error.message).toBe(`POST https://inside.example/ refused: inside.example resolves to ${described} (${address})`);
    });
  });

  describe('its error messages', () => {
    const secrets = ['alice', 'hunter2', 'tok123', 'sekrit', 'frag', 'body-secret', 'header-secret'];
    const secretPost = (port: number, overrides: Partial<WebhookPost> = {}) =>
      post({
        url: `http://alice:hunter2@127.0.0.1:${port}/hook/tok123?token=sekrit#frag`,
        headers: { 'webhook-signature': 'v1,header-secret' },
        body: '{"data":"body-secret"}',
        ...overrides,
      });

    it.each([
      ['refused by the address policy', async () => ({ port: (await receiver(answerWith(200))).port, overrides: { allowPrivate: false } })],
      ['connection refused', async () => ({ port: await freePort(), overrides: {} })],
      ['timed out', async () => ({ port: (await receiver(() => undefined)).port, overrides: { timeoutMs: 100 } })],
      ['body too large', async () => ({ port: 1, overrides: { body: `"body-secret${'x'.repeat(MAX_WEBHOOK_BODY_BYTES)}"` } })],
    ])('carry no user info, path secret, query, header or body (%s)', async (_, setUp) => {
      const { port, overrides } = await setUp();
      const error = await sendError(postWebhook(secretPost(port, overrides)));
      expect(error.message).toContain(`http://127.0.0.1:${port}/hook/…`);
      for (const secret of secrets) expect(error.message).not.toContain(secret);
    });
  });

  describe('over https', () => {
    let directory: string;
    beforeAll(() => {
      // A self-signed certificate, made here so that no key lives in the repository.
      directory = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
      const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'];
      execFileSync('openssl', [...args, '-subj', '/CN=localhost', '-keyout', 'key.pem', '-out', 'cert.pem'], { cwd: directory, stdio: 'ignore' });
    });
    afterAll(() => rmSync(directory, { recursive: true, force: true }));

    it('refuses a receiver whose certificate is not trusted, before sending anything', async () => {
      let requests = 0;
      const tls = { key: readFileSync(join(directory, 'key.pem')), cert: readFileSync(join(directory, 'cert.pem')) };
      const server = createHttpsServer(tls, (_, response) => {
        requests++;
        response.end();
      });
      const port = await listen(server);
      const error = await sendError(postWebhook(post({ url: `https://localhost:${port}/hook`, lookup: lookupOf('127.0.0.1') })));
      expect(error).toMatchObject({ reason: 'tls', refusedAddress: false });
      expect(error.message).toMatch(/^POST https:\/\/localhost:\d+\/hook failed: self.signed certificate/i);
      expect(requests).toBe(0);
    });
  });
});
