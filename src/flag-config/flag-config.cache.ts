import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { CLOCK, Clock } from '../common/clock';
import { FlagsRepository } from '../flags/flags.repository';
import { FlagConfigMetrics } from './flag-config.metrics';
import { Sql } from '../database/sql';
import { buildConfigPayload, ConfigPayload } from './config-payload';
import { ChangeFeed, FeedRead } from '../invalidation/change-feed';

/** An organization's config version as the change feed reads it. */
interface ChangedVersion {
  organizationId: string;
  version: number;
}

/** What the cache holds for one organization. */
interface Entry {
  /** The last payload built, fresh or not: while the database is away, polls get it anyway. */
  payload?: ConfigPayload;
  /** The config version `payload` was built from. */
  version: number;
  /** `payload` answers polls without a rebuild: no change to it has been heard of. */
  fresh: boolean;
  /** The highest version the change feed has read: a build from an older snapshot is not kept as fresh. */
  seen: number;
  /** Bumped by every invalidation, so that a build that raced a change is not kept as fresh. */
  generation: number;
  build?: Promise<ConfigPayload>;
  /** Polled since the eviction sweep last passed it (a second chance before it goes). */
  used: boolean;
  /** Bytes counted against MAX_BYTES. */
  weight: number;
}

/** What an entry with no payload weighs: the map's slot, the entry and the organization id. */
const ENTRY_WEIGHT = 512;

/**
 * Per-organization config payloads, built once per change and served from memory until the next one: the database
 * work of the poll follows changes, not polls or organizations. A payload is dropped when its organization changes:
 * at once on the instance that made the change and, through the invalidation bus, on every other; a change whose
 * message was lost is found by the change feed (ChangeFeed.PERIOD_MS), which reads the config versions that moved,
 * so the next poll rebuilds.
 *
 * Memory: a payload's bytes and its parsed flags, about twice its size (at most 50 flags of 4 KB each in an
 * organization: under 1 MB at worst, a few KB usually), counted against MAX_BYTES across organizations. Past it the
 * payloads polled least recently go first (each gets a second chance if polled since the last sweep), and their next
 * poll rebuilds them from the database.
 *
 * While the database is unreachable a rebuild fails, and the organization's last payload is served instead: polls
 * keep answering from memory, and no write can commit meanwhile anyway.
 */
@Injectable()
export class FlagConfigCache {
  static readonly MAX_BYTES = 256 * 1024 * 1024;
  /** MAX_BYTES; a test lowers it rather than fill 256 MB. */
  maxBytes = FlagConfigCache.MAX_BYTES;

  private readonly logger = new Logger(FlagConfigCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: Array<(organizationId: string | null) => void> = [];
  private bytes = 0;
  /** Bumped when everything is dropped, so that a build from before is not kept as fresh. */
  private epoch = 0;
  private servingLastKnown = false;

  constructor(
    private readonly sql: Sql,
    private readonly flags: FlagsRepository,
    bus: InvalidationBus,
    feed: ChangeFeed,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly metrics?: FlagConfigMetrics,
  ) {
    bus.subscribe('flags', (organizationId) => this.invalidate(organizationId));
    feed.register<ChangedVersion>({ sql: FlagsRepository.CONFIG_VERSIONS_CHANGED_SINCE, apply: (rows, read) => this.applyRead(rows, read) });
  }

  /** `listener` hears of every organization whose payload was dropped (null: every organization's). */
  onInvalidate(listener: (organizationId: string | null) => void): void {
    this.listeners.push(listener);
  }

  /** The cached payload while no change has been heard of: the poll's steady path, with no I/O and no allocation. */
  get(organizationId: string): ConfigPayload | Promise<ConfigPayload> {
    const entry = this.entries.get(organizationId);
    if (entry !== undefined && entry.fresh) {
      entry.used = true;
      return entry.payload!;
    }
    return this.build(organizationId, entry);
  }

  /** The organization's flags changed: its next poll rebuilds. */
  invalidate(organizationId: string): void {
    const entry = this.entries.get(organizationId);
    if (entry !== undefined) {
      entry.generation += 1;
      entry.fresh = false;
      entry.build = undefined;
    }
    for (const listener of this.listeners) listener(organizationId);
  }

  /** Every payload is stale (the database went back in time). */
  invalidateAll(): void {
    this.epoch += 1;
    for (const entry of this.entries.values()) {
      entry.fresh = false;
      entry.build = undefined;
    }
    for (const listener of this.listeners) listener(null);
  }

  /** Organizations with a payload or a build in memory, and the bytes they are counted for. */
  get footprint(): { organizations: number; bytes: number } {
    return { organizations: this.entries.size, bytes: this.bytes };
  }

  private applyRead(rows: ChangedVersion[], read: FeedRead): void {
    if (read.full) return this.invalidateAll();
    for (const { organizationId, version } of rows) {
      const entry = this.entries.get(organizationId);
      if (entry === undefined) {
        // Nothing cached to drop, but its streams (if any) must hear of it.
        for (const listener of this.listeners) listener(organizationId);
        continue;
      }
      if (version > entry.seen) entry.seen = version;
      // A build in flight may predate the change: `seen` keeps it from being kept as fresh.
      if (entry.fresh && entry.version < version) this.invalidate(organizationId);
    }
  }

  private build(organizationId: string, existing: Entry | undefined): Promise<ConfigPayload> {
    const entry = existing ?? this.add(organizationId);
    if (entry.build) return entry.build;
    const generation = entry.generation;
    const epoch = this.epoch;
    const build = this.flags
      .versionedConfig(this.sql, organizationId)
      .then(
        ({ version, entries }) => {
          const payload = buildConfigPayload(entries, new Date(this.clock.now()));
          this.metrics?.payloadRebuilds.inc();
          if (this.entries.get(organizationId) === entry && entry.generation === generation && this.epoch === epoch)
            this.keep(entry, payload, version);
          if (this.servingLastKnown) this.logger.log('Config payloads are built again');
          this.servingLastKnown = false;
          return payload;
        },
        (error: unknown) => {
          const last = entry.payload;
          if (!last) throw error;
          if (!this.servingLastKnown) this.logger.warn(`Serving last known config payloads: ${String(error)}`);
          this.servingLastKnown = true;
          return last;
        },
      )
      .finally(() => {
        if (entry.build === build) entry.build = undefined;
      });
    entry.build = build;
    return build;
  }

  private keep(entry: Entry, payload: ConfigPayload, version: number): void {
    const weight = ENTRY_WEIGHT + payload.body.length * 2;
    this.bytes += weight - entry.weight;
    entry.weight = weight;
    entry.payload = payload;
    entry.version = version;
    entry.fresh = version >= entry.seen;
    this.evictPast(entry);
  }

  private add(organizationId: string): Entry {
    const entry: Entry = { version: 0, fresh: false, seen: 0, generation: 0, used: false, weight: ENTRY_WEIGHT };
    this.entries.set(organizationId, entry);
    this.bytes += ENTRY_WEIGHT;
    this.evictPast(entry);
    return entry;
  }

  /** Drops the least recently polled entries (a second chance for those polled since) until the bytes fit; never `keep`. */
  private evictPast(keep: Entry): void {
    while (this.bytes > this.maxBytes && this.entries.size > 1) {
      const [organizationId, oldest] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(organizationId);
      if (oldest.used || oldest === keep) {
        oldest.used = false;
        this.entries.set(organizationId, oldest);
      } else {
        this.bytes -= oldest.weight;
      }
    }
  }
}
