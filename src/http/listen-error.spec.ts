import { createServer, Server } from 'node:net';
import { explainListenFailure, ListenError } from './listen-error';

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

describe('explainListenFailure', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });
  const server = () => {
    const made = createServer();
    servers.push(made);
    return made;
  };

  it('names PORT and HOST when the port is in use', async () => {
    const taken = server();
    await listen(taken, 0, '127.0.0.1');
    const port = (taken.address() as { port: number }).port;
    const failure = await listen(server(), port, '127.0.0.1').catch((error: unknown) => explainListenFailure(error, port, '127.0.0.1'));
    expect(failure).toBeInstanceOf(ListenError);
    expect(failure).toMatchObject({
      code: 'PORT_IN_USE',
      message: `Cannot listen on 127.0.0.1:${port} (HOST=127.0.0.1, PORT=${port}): the port is in use by another process. Stop that process, or set PORT to a free port.`,
    });
  });

  it('names HOST when it is not an address of this machine', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737), never assigned to a machine.
    const failure = await listen(server(), 0, '192.0.2.1').catch((error: unknown) => explainListenFailure(error, 0, '192.0.2.1'));
    expect(failure).toMatchObject({
      code: 'HOST_NOT_AVAILABLE',
      message: expect.stringMatching(/^Cannot listen on 192\.0\.2\.1:0 \(HOST=192\.0\.2\.1, PORT=0\): HOST is not/),
    });
  });

  it('names PORT when the user may not listen on it', () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), { code: 'EACCES' });
    expect(explainListenFailure(denied, 80, '0.0.0.0')).toMatchObject({ code: 'PORT_NOT_PERMITTED', message: expect.stringContaining('PORT=80') });
  });

  it('leaves any other error as it was', () => {
    const other = new Error('something else');
    expect(explainListenFailure(other, 8080, '0.0.0.0')).toBe(other);
  });
});
