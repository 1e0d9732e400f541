import { createServer, Server } from 'node:net';
import { freePort } from '../common/free-port';
import { loadConfig } from '../config/app-config';
import { MetricsListener } from './metrics-listener';
import { Metrics } from './metrics';

describe('MetricsListener', () => {
  it('stops the boot naming METRICS_PORT when its port is taken', async () => {
    const port = await freePort();
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const listener = new MetricsListener(new Metrics(), loadConfig({ HOST: '127.0.0.1', METRICS_PORT: String(port) }));
      await expect(listener.onApplicationBootstrap()).rejects.toThrow(`Cannot serve metrics on METRICS_PORT ${port} (host 127.0.0.1): EADDRINUSE`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
