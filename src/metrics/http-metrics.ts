import type { NextFunction, Request, Response } from 'express';
import { Metrics } from './metrics';

/**
 * Counts and times every request Express answers, labelled with the route pattern it matched
 * (`/v1/flags/:flagId`, never the URL, its ids or its query), or `unmatched`.
 */
export function httpMetrics(metrics: Metrics) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      const route = (request.route as { path?: unknown } | undefined)?.path;
      const labels = [request.method, typeof route === 'string' ? route : 'unmatched', String(response.statusCode)] as const;
      metrics.httpRequests.labels(...labels).inc();
      metrics.httpDuration.labels(...labels).observe(Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
