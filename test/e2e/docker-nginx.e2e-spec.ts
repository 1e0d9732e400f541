import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, request as httpRequest, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { freePort } from '../../src/common/free-port';
import { DOCKER_DIR, nginxBinary, readCompose, upstreamServers } from '../support/docker-files';
import { eventually } from '../support/eventually';
import { describeWithBinaries } from '../support/servers/binaries';

/**
 * docker/nginx.conf, run by the machine's nginx. The only changes made to it: the two upstream hosts (compose
 * service names, unresolvable here) become stand-in instances on loopback ports, `listen 80` becomes a loopback
 * port, and the temporary-file folders move into the test's own directory (nginx -t creates them). Everything else
 * (locations, limits, buffering, retries, headers, logging) is the file as shipped.
 */
const nginx = nginxBinary();
const SHIPPED = readFileSync(join(DOCKER_DIR, 'nginx.conf'), 'utf8');
const MAX_UPLOAD_BYTES = loadConfig({}).storage.maxUploadBytes;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** Bytes of the body received so far. */
  received: number;
}

/** A stand-in instance: records what reaches it; `respond` decides the answer. */
class StandIn {
  readonly seen: Seen[] = [];
  port = 0;
  private server?: Server;
  respond: (request: IncomingMessage, response: ServerResponse, seen: Seen) => void = (request, response) => {
    request.resume();
    request.on('end', () => response.end(`${this.name}\n`));
  };

  constructor(readonly name: string) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const seen: Seen = { method: request.method!, url: request.url!, headers: request.headers, received: 0 };
      this.seen.push(seen);
      request.on('data', (chunk: Buffer) => (seen.received += chunk.length));
      this.respond(request, response, seen);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

interface Reply {
  status: number;
  body: string;
  headers: IncomingMessage['headers'];
}

function call(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) },
        agent: false,
      },
      (incoming) => {
        let text = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (text += chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode!, body: text, headers: incoming.headers }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The shipped config with only the substitutions named above, each checked to have happened exactly once. */
function testCopy(dir: string, listenPort: number, upstreamPorts: number[]): string {
  let conf = SHIPPED;
  const replaceOnce = (from: string, to: string) => {
    expect(conf.split(from)).toHaveLength(2);
    conf = conf.replace(from, to);
  };
  const servers = upstreamServers(SHIPPED, 'flagstore');
  expect(servers).toHaveLength(upstreamPorts.length);
  servers.forEach(({ host, port }, index) => replaceOnce(`server ${host}:${port};`, `server 127.0.0.1:${upstreamPorts[index]};`));
  replaceOnce('listen 80;', `listen 127.0.0.1:${listenPort};`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`).join('\n');
  replaceOnce('\nhttp {\n', `\nhttp {\n${temp}\n`);
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, conf);
  return file;
}

/** Run as the same user as the test: as root, nginx's workers would switch to its compiled-in user otherwise. */
function nginxArgs(dir: string, file: string, run = true): string[] {
  const user = process.getuid?.() === 0 ? ' user root;' : '';
  const global = run ? `daemon off; pid ${join(dir, 'nginx.pid')};${user}` : `pid ${join(dir, 'nginx.pid')};`;
  return ['-p', dir, '-c', file, '-e', join(dir, 'error.log'), '-g', global];
}

/**
 * nginx's stdout and stderr: a file. The config logs to /dev/stdout and /dev/stderr (the container's log), which
 * nginx cannot open when they are sockets, as Node's pipes are.
 */
function logFd(dir: string): number {
  return openSync(join(dir, 'stdout.log'), 'a');
}

describeWithBinaries('docker/nginx.conf (nginx -t and requests through it)', { nginx })('docker/nginx.conf', () => {
  let dir: string;
  let conf: string;
  let port: number;
  let proc: ChildProcess | undefined;
  let exited: Promise<void>;
  const a = new StandIn('a');
  const b = new StandIn('b');

  async function startNginx(): Promise<void> {
    a.seen.length = 0;
    b.seen.length = 0;
    const out = logFd(dir);
    proc = spawn(nginx!, nginxArgs(dir, conf), { stdio: ['ignore', out, out] });
    closeSync(out);
    exited = new Promise((resolve) => proc!.once('exit', () => resolve()));
    await eventually(
      () => {
        try {
          execFileSync('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`], { stdio: 'ignore' });
          return true;
        } catch {
          return false;
        }
      },
      { intervalMs: 10, what: `nginx accepting connections on ${port}` },
    );
  }

  /** By PID (nginx's master, which we started): a fresh start also forgets which upstream nginx marked as failed. */
  async function stopNginx(): Promise<void> {
    if (!proc || proc.exitCode !== null) return;
    process.kill(proc.pid!, 'SIGTERM');
    await exited;
    proc = undefined;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flagstore-docker-nginx-'));
    await a.start();
    await b.start();
    port = await freePort();
    conf = testCopy(dir, port, [a.port, b.port]);
  });

  afterEach(async () => {
    await stopNginx();
    for (const standIn of [a, b]) {
      standIn.respond = (request, response) => {
        request.resume();
        request.on('end', () => response.end(`${standIn.name}\n`));
      };
    }
  });

  afterAll(async () => {
    await stopNginx();
    await a.stop();
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes nginx -t', () => {
    const out = logFd(dir);
    const before = readFileSync(join(dir, 'stdout.log'), 'utf8').length;
    try {
      // Throws (and the test fails with nginx's message in the log) when the test fails.
      execFileSync(nginx!, ['-t', ...nginxArgs(dir, conf, false)], { stdio: ['ignore', out, out] });
    } catch (error) {
      throw new Error(`nginx -t failed:\n${readFileSync(join(dir, 'stdout.log'), 'utf8').slice(before)}`, { cause: error });
    } finally {
      closeSync(out);
    }
    expect(readFileSync(join(dir, 'stdout.log'), 'utf8').slice(before)).toContain('test is successful');
  });

  it('retries a poll on the other instance when one answers 503 (restarting) or is gone', async () => {
    a.respond = (request, response) => {
      request.resume();
      response.writeHead(503, { 'Retry-After': '1' }).end('{"message":"shutting down"}');
    };
    await startNginx();
    for (let i = 0; i < 4; i += 1) {
      const reply = await call(port, 'GET', '/v1/flags/config', { Authorization: 'Bearer fsk_x' });
      expect(reply).toMatchObject({ status: 200, body: 'b\n' });
    }
    expect(a.seen.length).toBeGreaterThanOrEqual(1);
    await stopNginx();

    await a.stop();
    await startNginx();
    for (let i = 0; i < 4; i += 1) expect(await call(port, 'GET', '/ofrep/v1/evaluate/flags/x')).toMatchObject({ status: 200, body: 'b\n' });
    await stopNginx();
    await a.start().catch(() => undefined);
  });

  it('never sends a write to a second instance: a POST answered 503 comes back as 503', async () => {
    // a listens again on a new port after the previous test: rewrite the copy for it.
    conf = testCopy(dir, port, [a.port, b.port]);
    a.respond = (request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(503).end('a 503\n'));
    };
    await startNginx();
    const replies: Reply[] = [];
    while (a.seen.length === 0 && replies.length < 4)
      replies.push(await call(port, 'POST', '/v1/flags', { 'Content-Type': 'application/json' }, '{"key":"k"}'));
    expect(a.seen).toHaveLength(1);
    expect(replies.map((reply) => reply.body)).toContain('a 503\n');
    // Each POST reached exactly one instance.
    expect(a.seen.length + b.seen.length).toBe(replies.length);
  });

  it('tells the instance who the client is (whatever X-Forwarded-For it sent), over which scheme, and a request id', async () => {
    await startNginx();
    await call(port, 'GET', '/health');
    await call(port, 'GET', '/health', { 'X-Request-Id': 'caller-id-1' });
    // A client naming addresses of its choice, as one on a private network would to dodge its failure budget.
    await call(port, 'GET', '/v1/flags', { 'X-Forwarded-For': '10.1.2.3' });
    await call(port, 'POST', '/v1/admin/organizations', { 'X-Forwarded-For': '10.1.2.3, 192.168.0.9', 'Content-Type': 'application/json' }, '{}');
    await call(port, 'PUT', '/upload/org/item', { 'X-Forwarded-For': '172.16.0.1' }, 'x');
    const seen = [...a.seen, ...b.seen];
    expect(seen).toHaveLength(5);
    for (const request of seen) {
      expect(request.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(request.headers['x-forwarded-proto']).toBe('http');
      expect(request.headers.host).toBe(`127.0.0.1:${port}`);
      expect(request.headers['x-request-id']).toMatch(/^[\w.-]{1,100}$/);
    }
    expect(seen.map((request) => request.headers['x-request-id'])).toContain('caller-id-1');
  });

  it('streams an upload of MAX_UPLOAD_BYTES through as it arrives, and refuses a larger one itself', async () => {
    let answer: (() => void) | undefined;
    for (const standIn of [a, b]) {
      standIn.respond = (request, response) => {
        request.resume();
        answer = () => response.writeHead(400).end('stopped\n');
      };
    }
    await startNginx();
    const first = Buffer.alloc(256 * 1024, 1);
    const reply = new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'PUT',
          path: '/upload/org/item?expires=1&signature=s3cr3t-signature',
          headers: { 'Content-Type': 'image/png', 'Content-Length': String(MAX_UPLOAD_BYTES) },
          agent: false,
        },
        (incoming) => {
          incoming.resume();
          resolve(incoming.statusCode!);
          outgoing.destroy();
        },
      );
      outgoing.on('error', reject);
      outgoing.write(first);
      // Not ended: a buffering proxy would pass nothing on until the whole body had arrived.
      void eventually(() => [...a.seen, ...b.seen].some((seen) => seen.received >= first.length), {
        intervalMs: 10,
        what: 'the first 256 KB at an instance',
      }).then(
        () => answer!(),
        (error: unknown) => {
          outgoing.destroy();
          reject(new Error(`the instance received nothing of the upload while it was being sent (buffered?): ${String(error)}`));
        },
      );
    });
    expect(await reply).toBe(400);
    const seen = [...a.seen, ...b.seen];
    expect(seen).toHaveLength(1);
    expect(seen[0].headers['content-length']).toBe(String(MAX_UPLOAD_BYTES));

    const tooLarge = await call(port, 'PUT', '/upload/org/item', { 'Content-Length': String(MAX_UPLOAD_BYTES + 16 * 1024 * 1024) });
    expect(tooLarge.status).toBe(413);
    expect([...a.seen, ...b.seen]).toHaveLength(1);
  });

  it('passes each change-stream event on as the instance writes it', async () => {
    let end: (() => void) | undefined;
    for (const standIn of [a, b]) {
      standIn.respond = (request, response) => {
        response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        response.write('id: e1\nevent: message\ndata: {"type":"refetchEvaluation"}\n\n');
        end = () => response.end();
      };
    }
    await startNginx();
    const first = await new Promise<string>((resolve, reject) => {
      const outgoing = httpRequest({ host: '127.0.0.1', port, path: '/v1/flags/config/stream', agent: false }, (incoming) => {
        incoming.setEncoding('utf8');
        incoming.once('data', (chunk: string) => resolve(chunk));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(first).toContain('data: {"type":"refetchEvaluation"}');
    end?.();
  });

  it("answers compose's healthcheck route itself, with no instance involved and nothing in its access log", async () => {
    const healthcheck = ([] as string[]).concat(readCompose().services.nginx.healthcheck!.test!);
    const url = new URL(healthcheck.find((part) => part.startsWith('http://'))!);
    expect(url.host).toBe('127.0.0.1'); // port 80: `listen 80`, which the test copy moves to `port`
    for (const standIn of [a, b]) await standIn.stop();
    try {
      await startNginx();
      const before = readFileSync(join(dir, 'stdout.log'), 'utf8').length;
      const reply = await call(port, 'GET', url.pathname);
      expect(reply).toMatchObject({ status: 200, body: 'ok\n' });
      await stopNginx();
      expect(readFileSync(join(dir, 'stdout.log'), 'utf8').slice(before)).not.toContain(url.pathname);
    } finally {
      for (const standIn of [a, b]) await standIn.start();
      // The stand-ins listen on new ports: rewrite the copy for them.
      conf = testCopy(dir, port, [a.port, b.port]);
    }
  });

  it('does not serve /metrics (each instance is scraped directly), and keeps signed URLs out of its log', async () => {
    await startNginx();
    expect((await call(port, 'GET', '/metrics')).status).toBe(404);
    expect([...a.seen, ...b.seen]).toHaveLength(0);
    await call(port, 'GET', '/c/org/item?token=stream-t0ken');
    await stopNginx();
    const log = readFileSync(join(dir, 'stdout.log'), 'utf8');
    expect(log).toContain('GET /c/org/item HTTP/1.1');
    expect(log).toContain('PUT /upload/org/item HTTP/1.1');
    expect(log).not.toContain('s3cr3t-signature');
    expect(log).not.toContain('stream-t0ken');
  });
});
