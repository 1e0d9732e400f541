import { Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The service's Prometheus series, in a registry of this application's own (several apps in one process, as
 * in the tests, do not share series): the default process metrics, and the series README's Operations section lists ("Metrics").
 * Here: the default process metrics, HTTP requests of the Nest routes and the database pool (read at scrape
 * time). Every other series is registered in `registry` by the module that counts it: the config poll's,
 * payloads' and streams' by flag-config (FlagConfigMetrics), uploads' by storage (StorageMetrics), the bus's lag
 * by the invalidation bus, the rate limiter's Redis fallback by its store.
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
