import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { FlagsRepository } from '../flags/flags.repository';
import { FlagConfigMetrics } from './flag-config.metrics';
import { Sql } from '../database/sql';
import { buildConfigPayload, ConfigPayload } from './config-payload';

/**
 * Per-organization config payloads, built once per change and served from memory.
 * A committed flag change invalidates the organization's entry through the invalidation bus, so the very
 * next poll rebuilds it. Entries also expire after a while: a safety net for instances that share no bus
 * (no REDIS_URL) or that missed a message; a bus that had to resubscribe drops them all.
 *
 * While the database is unreachable a rebuild fails, and the organization's last payload is served instead:
 * polls keep answering from memory, and no write can commit meanwhile anyway.
 */
@Injectable()
export class FlagConfigCache {
  private readonly logger = new Logger(FlagConfigCache.name);
  private readonly payloads = new Map<string, ConfigPayload>();
  /** The last payload built for each organization, fresh or not: what a poll gets while the database is away. */
  private readonly lastKnown = new Map<string, ConfigPayload>();
  private readonly builds = new Map<string, Promise<ConfigPayload>>();
  /** Bumped by every invalidation (and `epoch` by every reset), so a build that raced a change is not kept. */
  private readonly generations = new Map<string, number>();
  private epoch = 0;
  private servingLastKnown = false;
  private readonly maxAgeMs: number;

  constructor(
    private readonly sql: Sql,
    private readonly flags: FlagsRepository,
    bus: InvalidationBus,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly metrics?: FlagConfigMetrics,
  ) {
    this.maxAgeMs = config.redisUrl ? 60_000 : 5_000;
    bus.subscribe('flags', (organizationId) => this.invalidate(organizationId));
    bus.onReset(() => this.invalidateAll());
  }

  /**
   * The cached payload while it is fresh: the poll's steady path, with no I/O and no allocation. In the last
   * fifth of its life the first poll also starts one rebuild in the background, so polls never all wait for
   * a rebuild when it expires.
   */
  get(organizationId: string): ConfigPayload | Promise<ConfigPayload> {
    const payload = this.payloads.get(organizationId);
    if (payload !== undefined) {
      const age = this.clock.now() - payload.builtAt;
      if (age < this.maxAgeMs) {
        if (age >= this.maxAgeMs * 0.8 && !this.builds.has(organizationId)) this.build(organizationId).catch(() => undefined);
        return payload;
      }
    }
    return this.build(organizationId);
  }

  invalidate(organizationId: string): void {
    this.generations.set(organizationId, (this.generations.get(organizationId) ?? 0) + 1);
    this.payloads.delete(organizationId);
    this.builds.delete(organizationId);
  }

  invalidateAll(): void {
    this.epoch += 1;
    this.payloads.clear();
    this.builds.clear();
  }

  private build(organizationId: string): Promise<ConfigPayload> {
    const pending = this.builds.get(organizationId);
    if (pending) return pending;
    const generation = this.generations.get(organizationId) ?? 0;
    const epoch = this.epoch;
    const build = this.flags
      .configEntries(this.sql, organizationId)
      .then(
        (entries) => {
          const payload = buildConfigPayload(entries, new Date(this.clock.now()));
          this.metrics?.payloadRebuilds.inc();
          if ((this.generations.get(organizationId) ?? 0) === generation && this.epoch === epoch) {
            this.payloads.set(organizationId, payload);
            this.lastKnown.set(organizationId, payload);
          }
          if (this.servingLastKnown) this.logger.log('Config payloads are built again');
          this.servingLastKnown = false;
          return payload;
        },
        (error: unknown) => {
          const last = this.lastKnown.get(organizationId);
          if (!last) throw error;
          if (!this.servingLastKnown) this.logger.warn(`Serving last known config payloads: ${String(error)}`);
          this.servingLastKnown = true;
          return last;
        },
      )
      .finally(() => {
        if (this.builds.get(organizationId) === build) this.builds.delete(organizationId);
      });
    this.builds.set(organizationId, build);
    return build;
  }
}
