import { Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics';

/**
 * The config poll's outcomes as plain counts, read into `flagstore_config_polls_total` at scrape time: a poll
 * adds one to an integer instead of going through a counter (whose `inc` hashes its labels every time).
 */
export class PollCounts {
  ok = 0;
  notModified = 0;
  limited = 0;
}

/** The series of the config poll, its payloads and its change streams, in the app's registry. */
@Injectable()
export class FlagConfigMetrics {
  /** Counted by the poll itself (FlagConfigPoll), scraped as flagstore_config_polls_total. */
  readonly pollCounts = new PollCounts();
  readonly payloadRebuilds: Counter;
  readonly streamConnections: Gauge;

  constructor(@Optional() metrics?: Metrics) {
    const registers = metrics ? [metrics.registry] : [];
    const counts = this.pollCounts;
    new Counter({
      name: 'flagstore_config_polls_total',
      help: 'GET /v1/flags/config answers by outcome: 200, 304, 429',
      labelNames: ['outcome'] as const,
      registers,
      collect() {
        this.reset();
        this.inc({ outcome: '200' }, counts.ok);
        this.inc({ outcome: '304' }, counts.notModified);
        this.inc({ outcome: '429' }, counts.limited);
      },
    });
    this.payloadRebuilds = new Counter({
      name: 'flagstore_config_payload_rebuilds_total',
      help: 'Config payloads built from the database (after a change, an expiry, or a reset)',
      registers,
    });
    this.streamConnections = new Gauge({ name: 'flagstore_stream_connections', help: 'Open config change streams', registers });
  }
}
