import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from './metrics';

/** The one path the internal listener serves. */
export const METRICS_PATH = '/metrics';

/**
 * With METRICS_PORT: a second HTTP listener, on HOST, that serves `GET /metrics` and nothing else, without a token.
 * It is meant to be reachable only from inside (a compose network, a pod's port no Service exposes), so that
 * Prometheus scrapes each instance there while the public listener serves no metrics at all. A plain Node server:
 * none of the public edge (CORS, JSON bodies, API errors, request logs) applies to it.
 */
@Injectable()
export class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsListener.name);
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metricsPort;
    if (port === undefined) return;
    const server = createServer((request, response) => void this.answer(request, response));
    server.requestTimeout = this.config.timeouts.requestMs;
    server.headersTimeout = Math.min(this.config.timeouts.requestMs, 60_000);
    server.keepAliveTimeout = this.config.timeouts.keepAliveMs;
    const host = this.config.http.host;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(`Cannot serve metrics on METRICS_PORT ${port} (host ${host}): ${error.code ?? error.message}`, { cause: error })),
      );
      server.listen(port, host, resolve);
    });
    server.on('error', (error) => this.logger.error(`The metrics listener failed: ${error.message}`));
    this.server = server;
    this.logger.log(`Serving GET ${METRICS_PATH} on ${host}:${port} (METRICS_PORT), without a token: keep this port internal`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH) return plain(response, 404, `Not found: this listener serves GET ${METRICS_PATH} only\n`);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return plain(response, 405, `Method not allowed: GET ${METRICS_PATH}\n`);
    }
    try {
      const text = await this.metrics.registry.metrics();
      response.writeHead(200, { 'Content-Type': this.metrics.registry.contentType, 'Cache-Control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch (error) {
      this.logger.error(`Collecting metrics failed: ${error instanceof Error ? error.message : String(error)}`);
      plain(response, 500, 'Collecting the metrics failed; see the service log\n');
    }
  }
}

function plain(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  response.end(body);
}
