import { Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { HealthCheckResult, HealthCheckService, HealthIndicatorFunction, HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { RedisConnections } from '../redis/redis.module';
import { ReadinessChecks } from './readiness-checks';

/** Each check is `down` after this; checks run together, so a hung dependency fails readiness well within 3 s. */
export const CHECK_TIMEOUT_MS = 2_000;

export interface Readiness {
  ready: boolean;
  result: HealthCheckResult;
}

/**
 * Liveness and readiness through @nestjs/terminus. Ready: the database answers, no migration is pending, every
 * check another module registered passes (storage's: the object store is usable), and, when configured, Redis
 * answers. Every check has a timeout.
 *
 * The routes are public, so the answer says only up or down per check: why a check failed (a driver's message,
 * which names paths, hosts and ports) is logged instead, once when it goes down or its reason changes and once
 * when it is back, not on every probe.
 */
@Injectable()
export class HealthChecks {
  private readonly logger = new Logger('Readiness');
  /** The reason last logged for each check that is down. */
  private readonly down = new Map<string, string>();

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisConnections,
    private readonly registered: ReadinessChecks,
  ) {}

  /** The process answers: no dependency is asked. */
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  async ready(): Promise<Readiness> {
    const checks: HealthIndicatorFunction[] = [
      () => this.attempt('database', async () => void (await this.dataSource.query('SELECT 1'))),
      () =>
        this.attempt('migrations', async () => {
          if (await this.dataSource.showMigrations()) throw new Error('migrations are pending: run npm run migration:run');
        }),
    ];
    for (const [name, check] of this.registered.entries()) checks.push(() => this.attempt(name, check));
    const redis = this.redis.commands;
    if (redis) checks.push(() => this.attempt('redis', async () => void (await redis.ping())));
    let readiness: Readiness;
    try {
      readiness = { ready: true, result: await this.health.check(checks) };
    } catch (error) {
      // Terminus reports a failed check as a 503 carrying the whole result.
      if (!(error instanceof ServiceUnavailableException)) throw error;
      readiness = { ready: false, result: error.getResponse() as HealthCheckResult };
    }
    this.logChanges(readiness.result.details);
    return { ready: readiness.ready, result: publicResult(readiness.result) };
  }

  private logChanges(details: HealthIndicatorResult): void {
    for (const [key, detail] of Object.entries(details)) {
      if (detail.status === 'up') {
        if (this.down.delete(key)) this.logger.log(`${key} is up again`);
        continue;
      }
      const { status: _status, ...rest } = detail;
      const reason = typeof rest.message === 'string' ? rest.message : JSON.stringify(rest);
      if (this.down.get(key) === reason) continue;
      this.down.set(key, reason);
      this.logger.warn(`${key} is down: ${reason}`);
    }
  }

  /** `key` is up when `check` resolves within CHECK_TIMEOUT_MS, down (saying why) otherwise. */
  private async attempt(key: string, check: () => Promise<void>): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), timeout]);
      return indicator.up({ responseTime: Date.now() - started });
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error), responseTime: Date.now() - started });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Each check's status alone: what a failed check said stays in the log. */
function publicResult(result: HealthCheckResult): HealthCheckResult {
  const statuses = (entries: Partial<HealthIndicatorResult> | undefined): HealthIndicatorResult | undefined =>
    entries && Object.fromEntries(Object.entries(entries).flatMap(([key, detail]) => (detail ? [[key, { status: detail.status }]] : [])));
  return { status: result.status, info: statuses(result.info), error: statuses(result.error), details: statuses(result.details)! };
}
