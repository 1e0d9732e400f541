import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { freePort } from './free-port';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('gives ports a server can listen on, below the ephemeral range, where outgoing connections never take them', async () => {
    const range = '/proc/sys/net/ipv4/ip_local_port_range';
    const ephemeralStart = existsSync(range) ? Number(readFileSync(range, 'utf8').trim().split(/\s+/)[0]) : 49_152;
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart);
    }
    const servers = await Promise.all([...new Set(ports)].map(listen));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
});
