import { createServer, IncomingMessage, request as httpRequest, Server, ServerResponse } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { eventually } from '../../test/support/eventually';
import { HttpDrain } from './http-drain';
import { LingerLimits, LingeringClose } from './lingering-close';

/** A raw client: what it received, how many body bytes it got onto the wire, and how its connection ended. */
interface RawClient {
  socket: Socket;
  received(): string;
  written(): number;
  /** Whether the server's end of the connection arrived (in order, after what it sent). */
  serverEnded(): boolean;
  /** Resolves when the connection is gone: 'closed' by an orderly close of the server's, or the error that ended it. */
  ended: Promise<string>;
}

describe('LingeringClose', () => {
  let server: Server;
  let port: number;
  let lingering: LingeringClose;
  const openSockets = new Set<Socket>();

  /** A server that refuses every request with a body at once (413, its body unread), as json-body does. */
  async function start(limits: LingerLimits, handler?: (request: IncomingMessage, response: ServerResponse) => void): Promise<void> {
    server = createServer((request, response) => {
      lingering.watch(request, response);
      if (handler) return handler(request, response);
      response.statusCode = 413;
      response.end('too large');
    });
    lingering = LingeringClose.of(server, limits);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  }

  afterEach(async () => {
    for (const socket of openSockets) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /**
   * Opens a connection and sends the head of a POST declaring `declared` bytes. The client goes on sending after
   * the server's end of the connection (half-open), as a client does that writes its whole body before it reads.
   */
  async function post(declared: number): Promise<RawClient> {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    openSockets.add(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    let written = 0;
    let serverEnded = false;
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.once('end', () => (serverEnded = true));
    const ended = new Promise<string>((resolve) => {
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      socket.once('close', () => resolve('closed'));
    });
    const write = socket.write.bind(socket);
    socket.write = ((chunk: Buffer, callback?: () => void) => {
      written += chunk.length;
      return write(chunk, callback);
    }) as Socket['write'];
    socket.write(Buffer.from(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`));
    written = 0;
    return { socket, received: () => received, written: () => written, serverEnded: () => serverEnded, ended };
  }

  /** Writes `chunk` over and over while the connection takes it, `gapMs` apart, until it ends. */
  async function keepSending(client: RawClient, chunk: Buffer, gapMs: number): Promise<void> {
    let open = true;
    void client.ended.then(() => (open = false));
    while (open && !client.socket.destroyed) {
      await new Promise<void>((resolve) => client.socket.write(chunk, () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  }

  it('answers a refused body still arriving, reads the rest while it comes, then closes without a reset', async () => {
    await start({ ms: 10_000, bytes: 4 * 1024 * 1024 });
    const body = Buffer.alloc(2 * 1024 * 1024, 'x');
    const answers: Array<{ status?: number; connection?: string; text: string; error?: string }> = [];
    for (let i = 0; i < 10; i += 1) {
      answers.push(
        await new Promise((resolve) => {
          const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'POST', agent: false, headers: { 'Content-Length': body.length } });
          outgoing.on('response', (response) => {
            let text = '';
            response.on('data', (chunk) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode, connection: response.headers.connection, text }));
          });
          outgoing.on('error', (error) => resolve({ text: '', error: error.message }));
          // In pieces, as a body arrives across a network: most of it is still to come when the answer is written.
          let offset = 0;
          const next = () => {
            if (offset >= body.length) return void outgoing.end();
            outgoing.write(body.subarray(offset, (offset += 64 * 1024)), () => setTimeout(next, 1));
          };
          next();
        }),
      );
    }
    expect(answers).toEqual(Array.from({ length: 10 }, () => ({ status: 413, connection: 'close', text: 'too large' })));
  });

  it('closes in order once the rest of the body has arrived, and keeps no connection lingering', async () => {
    await start({ ms: 10_000, bytes: 4 * 1024 * 1024 });
    const client = await post(300 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 [^]*\r\nConnection: close\r\n/);
    expect(lingering.count).toBe(1);
    client.socket.write(Buffer.alloc(300 * 1024));
    await eventually(() => lingering.count === 0, { what: 'the lingering connection closed' });
    // The server's end came in order (after its answer), and nothing was reset.
    expect(client.serverEnded()).toBe(true);
    client.socket.end();
    expect(await client.ended).toBe('closed');
  });

  it('stops reading after its byte limit: a client that keeps sending is cut off', async () => {
    await start({ ms: 60_000, bytes: 1024 * 1024 });
    const client = await post(1024 ** 3);
    const started = Date.now();
    await keepSending(client, Buffer.alloc(64 * 1024), 0);
    // Cut off long before the minute the time limit allows, after the client's bytes passed the byte limit.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(client.written()).toBeGreaterThan(1024 * 1024);
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(lingering.count).toBe(0);
  });

  it('stops reading after its time limit: a client that trickles is cut off', async () => {
    await start({ ms: 300, bytes: 1024 ** 3 });
    const client = await post(1024 ** 3);
    const started = Date.now();
    await keepSending(client, Buffer.alloc(16), 20);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(30_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('keeps the connection of a request whose body had all arrived by its answer', async () => {
    await start({ ms: 10_000, bytes: 4 * 1024 * 1024 }, (request, response) => {
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    const client = await post(3);
    client.socket.write(Buffer.from('abc'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 [^]*\r\nConnection: keep-alive\r\n/);
    expect(client.socket.destroyed).toBe(false);
  });

  it('is not waited for by the shutdown drain', async () => {
    await start({ ms: 60_000, bytes: 4 * 1024 * 1024 });
    const drain = new HttpDrain(server);
    const client = await post(1024 ** 2);
    client.socket.write(Buffer.alloc(1024));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lingering.count).toBe(1);
    const started = Date.now();
    // A minute of drain period: were the lingering connection waited for, the drain would take it all.
    await drain.drain({ drainMs: 60_000, graceMs: 120_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    await eventually(() => lingering.count === 0, { what: 'the lingering connection ended' });
  });
});
