import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
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
 */
@Injectable()
export class HealthChecks {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
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
      () => this.typeOrm.pingCheck('database', { connection: this.dataSource, timeout: CHECK_TIMEOUT_MS }),
      () =>
        this.attempt('migrations', async () => {
          if (await this.dataSource.showMigrations()) throw new Error('migrations are pending: run npm run migration:run');
        }),
    ];
    for (const [name, check] of this.registered.entries()) checks.push(() => this.attempt(name, check));
    const redis = this.redis.commands;
    if (redis) checks.push(() => this.attempt('redis', async () => void (await redis.ping())));
    try {
      return { ready: true, result: await this.health.check(checks) };
    } catch (error) {
      // Terminus reports a failed check as a 503 carrying the whole result.
      if (error instanceof ServiceUnavailableException) return { ready: false, result: error.getResponse() as HealthCheckResult };
      throw error;
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
