import { Agent, createServer, get, IncomingMessage, Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { eventually } from '../../test/support/eventually';
import { HttpDrain } from './http-drain';

describe('HttpDrain', () => {
  let server: Server;
  let drain: HttpDrain;
  let port: number;
  let agent: Agent;
  /** Requests to /slow/<ms> answer after that long. */
  beforeEach(async () => {
    server = createServer((request, response) => {
      const delay = Number(request.url?.split('/')[2] ?? 0);
      setTimeout(() => response.end('ok'), delay);
    });
    // Shorter than the drain periods below, as in production (5 s against 6 s); clients stop reusing a socket a
    // second before the whole seconds it announces, so it is over two.
    server.keepAliveTimeout = 2_500;
    drain = new HttpDrain(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterEach(() => {
    agent.destroy();
    server.closeAllConnections();
    server.close();
  });

  const fetchOnce = (path = '/slow/0') =>
    new Promise<{ status: number; connection?: string; localPort?: number }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path, agent }, (response: IncomingMessage) => {
        const localPort = response.socket.localPort;
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, localPort }));
      }).on('error', reject);
    });

  it('keeps answering on idle keep-alive connections, each answer closing its connection, then stops accepting', async () => {
    const first = await fetchOnce();
    expect(first.connection).toBe('keep-alive');
    const drained = drain.drain({ drainMs: 2_800, graceMs: 4_000 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // idle, but within the keep-alive timeout
    expect(drain.isDraining).toBe(true);

    // The idle connection is reused once (no reset), answered with Connection: close, and not reused again.
    const reused = await fetchOnce();
    expect(reused).toMatchObject({ status: 200, connection: 'close' });
    expect(reused.localPort).toBe(first.localPort);
    const next = await fetchOnce();
    expect(next).toMatchObject({ status: 200, connection: 'close' });
    expect(next.localPort).not.toBe(first.localPort);

    await drained;
    await expect(fetchOnce()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('lets a request in flight finish within the grace period', async () => {
    const slow = fetchOnce('/slow/600');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await drain.drain({ drainMs: 2_800, graceMs: 5_000 });
    await expect(slow).resolves.toMatchObject({ status: 200 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('serves a connection accepted before it stopped accepting whose request arrives after: no reset', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    const ended = new Promise<Error | undefined>((resolve) => {
      socket.once('error', resolve);
      socket.once('close', () => resolve(undefined));
    });
    const started = Date.now();
    const drained = drain.drain({ drainMs: 100, graceMs: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(fetchOnce()).rejects.toMatchObject({ code: 'ECONNREFUSED' }); // no longer accepting

    socket.write('GET /slow/0 HTTP/1.1\r\nHost: x\r\n\r\n'); // the proxy's request, sent before it knew
    expect(await ended).toBeUndefined();
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    await drained;
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('in its fence, answers what `refuse` takes with its own answer, and serves the rest', async () => {
    server.close();
    const served: string[] = [];
    server = createServer((request, response) => {
      served.push(request.url!);
      response.end('ok');
    });
    drain = new HttpDrain(server, (request, response) => {
      if (request.url !== '/poll') return false;
      response.statusCode = 503;
      response.end('retry elsewhere');
      return true;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    // A proxy's idle connection: with a connection open, shutdown drains and fences.
    const proxy = connect(port, '127.0.0.1');
    await new Promise((resolve) => proxy.once('connect', resolve));
    await eventually(() => drain.connections === 1, { what: 'the proxy connection counted' });

    const drained = drain.drain({ drainMs: 100, fenceMs: 400, graceMs: 3_000 });
    await expect(fetchOnce('/poll')).resolves.toMatchObject({ status: 200, connection: 'close' }); // before the fence
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(fetchOnce('/poll')).resolves.toMatchObject({ status: 503, connection: 'close' });
    await expect(fetchOnce('/write')).resolves.toMatchObject({ status: 200, connection: 'close' });
    expect(served).toEqual(['/poll', '/write']);
    proxy.destroy();
    await drained;
    await expect(fetchOnce('/poll')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('with no connection open, stops accepting at once instead of waiting out the drain period and the fence', async () => {
    expect(drain.connections).toBe(0);
    // Ten minutes of drain and fence: were they waited out, the race below would answer 'still draining'.
    const drained = drain.drain({ drainMs: 600_000, fenceMs: 600_000, graceMs: 1_200_000 }).then(() => 'stopped');
    const outcome = await Promise.race([drained, new Promise((resolve) => setTimeout(() => resolve('still draining'), 5_000).unref())]);
    expect(outcome).toBe('stopped');
    await expect(fetchOnce()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('counts the connections open, so that one left open keeps the drain going', async () => {
    const first = await fetchOnce();
    expect(first.connection).toBe('keep-alive');
    expect(drain.connections).toBe(1);
    agent.destroy();
    await eventually(() => drain.connections === 0, { what: 'the closed connection uncounted' });
  });

  it('cuts a request that outlasts the grace period', async () => {
    const stuck = fetchOnce('/slow/10000');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await drain.drain({ drainMs: 100, graceMs: 500 });
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect(stuck).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});
