import type { Server } from 'node:http';
import request from 'supertest';
import type { AppConfig } from '../../src/config/app-config';

/** A METRICS_TOKEN for test apps that scrape their public /metrics. */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789abcdefghij';

/**
 * An app's Prometheus text, from where it serves it: its internal listener (METRICS_PORT), or else its public
 * listener with METRICS_TOKEN. An app with neither serves no metrics.
 */
export async function scrapeMetrics(t: { config: AppConfig; http: Server }): Promise<{ text: string; contentType: string }> {
  if (t.config.metricsPort !== undefined) {
    const response = await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`);
    if (response.status !== 200) throw new Error(`the metrics listener answered ${response.status}`);
    return { text: await response.text(), contentType: response.headers.get('content-type') ?? '' };
  }
  if (t.config.metricsToken === undefined) throw new Error('this app serves no metrics: give it METRICS_PORT or METRICS_TOKEN');
  const response = await request(t.http).get('/metrics').set('Authorization', `Bearer ${t.config.metricsToken}`).expect(200);
  return { text: response.text, contentType: String(response.headers['content-type']) };
}
