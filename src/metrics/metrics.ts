import { Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The config poll's outcomes as plain counts, read into `flagstore_config_polls_total` at scrape time: a poll
 * adds one to an integer instead of going through a counter (whose `inc` hashes its labels every time).
 */
export class PollCounts {
  ok = 0;
  notModified = 0;
  limited = 0;
}

/**
 * The service's Prometheus series, in a registry of this application's own (several apps in one process, as
 * in the tests, do not share series): the default process metrics, and the series README's Operations section lists ("Metrics").
 * Values held elsewhere are read at scrape time: the database pool here; other modules register their own
 * collectors in `registry` (the rate limiter its Redis fallback counts).
 */
@Injectable()
export class Metrics implements OnModuleInit, OnApplicationShutdown {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered by the Nest routes (not the lean config poll), by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request on the Nest routes (not the lean config poll), by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Counted by the poll itself (FlagConfigPoll), scraped as flagstore_config_polls_total. */
  readonly pollCounts = new PollCounts();
  readonly configPolls = new Counter({
    name: 'flagstore_config_polls_total',
    help: 'GET /v1/flags/config answers by outcome: 200, 304, 429',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
    collect: countsOf(this.pollCounts),
  });
  readonly payloadRebuilds = new Counter({
    name: 'flagstore_config_payload_rebuilds_total',
    help: 'Config payloads built from the database (after a change, an expiry, or a reset)',
    registers: [this.registry],
  });
  readonly streamConnections = new Gauge({
    name: 'flagstore_stream_connections',
    help: 'Open config change streams',
    registers: [this.registry],
  });
  readonly uploadBytes = new Counter({
    name: 'flagstore_upload_bytes_total',
    help: 'Bytes of uploads stored (completed uploads only)',
    registers: [this.registry],
  });
  readonly uploadFailures = new Counter({
    name: 'flagstore_upload_failures_total',
    help: 'Uploads that failed, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly busLag = new Histogram({
    name: 'flagstore_invalidation_bus_lag_seconds',
    help: 'Time from an invalidation published on another instance to its receipt here',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    registers: [this.registry],
  });

  constructor(@Optional() @InjectDataSource() private readonly dataSource?: DataSource) {
    const pool = () => this.pool();
    new Gauge({
      name: 'flagstore_db_pool_connections',
      help: 'Connections of the database pool: total, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const connections = pool();
        if (!connections) return;
        this.set({ state: 'total' }, connections.totalCount);
        this.set({ state: 'idle' }, connections.idleCount);
        this.set({ state: 'waiting' }, connections.waitingCount);
      },
    });
  }

  onModuleInit(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  onApplicationShutdown(): void {
    this.registry.clear();
  }

  /** The pg pool behind the data source (PostgresDriver's `master`, a public field). */
  private pool(): Pool | undefined {
    return (this.dataSource?.driver as PostgresDriver | undefined)?.master as Pool | undefined;
  }
}

/** The `collect` of flagstore_config_polls_total: the poll's counts as they are at scrape time. */
function countsOf(counts: PollCounts): (this: Counter<'outcome'>) => void {
  return function collect() {
    this.reset();
    this.inc({ outcome: '200' }, counts.ok);
    this.inc({ outcome: '304' }, counts.notModified);
    this.inc({ outcome: '429' }, counts.limited);
  };
}
