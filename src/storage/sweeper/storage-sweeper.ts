import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { CLOCK, Clock, ClockTimer } from '../../common/clock';
import { DataSource } from 'typeorm';
import { withTryAdvisoryLock } from '../../database/advisory-lock';
import { SWEEP_LOCK_KEY } from '../../database/advisory-lock-keys';
import { Sql } from '../../database/sql';
import { StorageRepository } from '../items/storage.repository';
import { itemIdOfKey, OBJECT_STORE, ObjectStore } from '../object-store/object-store';

export const SWEEP_INTERVAL_MS = 60_000;
/**
 * An object younger than this may belong to an upload that has committed its bytes but not yet its row
 * (a non-allocated upload inserts its row right after the store commits), so the orphan pass leaves it.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
/**
 * A spent nonce is kept this long past its URL's expiry. Instances check expiry on their own clocks, so an
 * instance whose clock runs behind the sweeper's still takes the URL as valid for a while after the sweeper
 * thinks it expired; while the nonce is kept, that instance still answers 409 to a replay.
 */
export const NONCE_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** A claim this old belongs to an upload whose process died: its pending item may be swept once expired. */
export const STALE_CLAIM_MS = 60 * 60 * 1000;
const BATCH = 500;
/** Objects the orphan pass examines per run, whatever the size of the store: the next run resumes after them. */
export const ORPHAN_SCAN_PAGE = 1000;
// Defined with every other advisory lock key; still exported from here, where the tests have always found it.
export { SWEEP_LOCK_KEY };

export interface SweepReport {
  /** Another instance held the sweep lock: this run did none of the shared work (only its own temp files). */
  skipped: boolean;
  expiredItems: number;
  expiredNonces: number;
  /** Objects the orphan pass examined this run: at most one page. */
  scannedObjects: number;
  orphanObjects: number;
  temporaryFiles: number;
}

export interface SweepOptions {
  /** Objects the orphan pass examines in this run (ORPHAN_SCAN_PAGE); tests make it small. */
  orphanScanPage?: number;
}

/**
 * Restores "the database and the store agree" after anything that broke it: pending items whose URL
 * expired unused (row first, then bytes, like every delete), nonces of URLs expired for more than the
 * clock-skew margin, objects without a row
 * (a crash between a row delete and its object delete, or between an upload's commit and its row), and
 * temp files of uploads that died.
 *
 * Every instance runs it every SWEEP_INTERVAL_MS, but the shared work runs on one at a time, under the advisory
 * lock SWEEP_LOCK_KEY: an instance that finds it taken skips that work until its next run. The orphan pass reads
 * one page of the store's listing per run, resuming after the key kept in storage_sweep_state, and starts over
 * once the listing ends; so a run costs one page, and the store is covered once every (objects / page) runs of
 * any instances. Temp files live on each instance's own disk (S3's upload spool), so each instance sweeps its own,
 * lock or no lock. Every step is idempotent, so a run cut short (or a lock lost with its connection) is repaired
 * by the next.
 */
@Injectable()
export class StorageSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StorageSweeper.name);
  private timer: ClockTimer | null = null;
  private running: Promise<SweepReport> | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly repository: StorageRepository,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    // The clock's timers never keep a process alive that is otherwise done.
    this.timer = this.clock.every(SWEEP_INTERVAL_MS, () => {
      this.sweep().catch((error: Error) => this.logger.error(`sweep failed: ${error.stack ?? error.message}`));
    });
  }

  onApplicationShutdown(): void {
    this.timer?.stop();
  }

  /**
   * One sweep as of `now`, by default the clock's time (tests pass a later time instead of waiting). Concurrent
   * calls on this instance share one run (the first call's options apply).
   */
  sweep(now = new Date(this.clock.now()), options: SweepOptions = {}): Promise<SweepReport> {
    this.running ??= this.run(now, options.orphanScanPage ?? ORPHAN_SCAN_PAGE).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(now: Date, orphanScanPage: number): Promise<SweepReport> {
    if (!Number.isInteger(orphanScanPage) || orphanScanPage < 1) throw new Error(`orphanScanPage must be a positive integer`);
    const report: SweepReport = {
      skipped: false,
      expiredItems: 0,
      expiredNonces: 0,
      scannedObjects: 0,
      orphanObjects: 0,
      temporaryFiles: 0,
    };
    const orphanBefore = new Date(now.getTime() - ORPHAN_GRACE_MS);
    const locked = await withTryAdvisoryLock(this.dataSource, SWEEP_LOCK_KEY, async () => {
      await this.sweepExpired(now, report);
      await this.sweepOrphans(orphanBefore, orphanScanPage, report);
    });
    report.skipped = !locked.acquired;
    if (report.skipped) this.logger.debug('another instance is sweeping: this run only sweeps its own temp files');
    report.temporaryFiles = await this.store.sweepTemporary(orphanBefore);
    if (report.expiredItems + report.expiredNonces + report.orphanObjects + report.temporaryFiles > 0) {
      this.logger.log(`swept ${JSON.stringify(report)}`);
    }
    return report;
  }

  private async sweepExpired(now: Date, report: SweepReport): Promise<void> {
    const staleClaim = new Date(now.getTime() - STALE_CLAIM_MS);
    for (;;) {
      const keys = await this.repository.deleteExpiredPending(this.sql, now, staleClaim, BATCH);
      for (const key of keys) await this.deleteObject(key);
      report.expiredItems += keys.length;
      if (keys.length < BATCH) break;
    }
    report.expiredNonces = await this.repository.deleteExpiredNonces(this.sql, new Date(now.getTime() - NONCE_CLOCK_SKEW_MS));
  }

  /**
   * Examines at most `page` objects after the kept marker, then keeps the last one examined; when the listing
   * ends within the page, the marker goes and the next run starts from the beginning. The listing is asked for
   * one object past the page, to tell "ended" from "more to come" without a run that examines nothing.
   */
  private async sweepOrphans(orphanBefore: Date, page: number, report: SweepReport): Promise<void> {
    const marker = await this.repository.orphanScanMarker(this.sql);
    const candidates: string[] = [];
    let last: string | null = null;
    let ended = false;
    const listing = this.store.list(marker ?? undefined)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await listing.next();
        if (next.done) {
          ended = true;
          break;
        }
        if (report.scannedObjects === page) break;
        report.scannedObjects += 1;
        last = next.value.key;
        if (next.value.lastModified < orphanBefore && itemIdOfKey(next.value.key) !== null) candidates.push(next.value.key);
      }
    } finally {
      await listing.return?.();
    }

    for (let start = 0; start < candidates.length; start += BATCH) {
      const batch = candidates.slice(start, start + BATCH);
      const existing = await this.repository.existingItemIds(
        this.sql,
        batch.map((key) => itemIdOfKey(key)!),
      );
      for (const key of batch) {
        if (!existing.has(itemIdOfKey(key)!) && (await this.deleteObject(key))) report.orphanObjects += 1;
      }
    }
    await this.repository.saveOrphanScanMarker(this.sql, ended ? null : last);
  }

  /** One object failing to delete must not stop the sweep; without its row it is an orphan the scan meets again. */
  private async deleteObject(key: string): Promise<boolean> {
    try {
      await this.store.delete(key);
      return true;
    } catch (error) {
      this.logger.warn(`could not delete ${key}, the orphan scan will retry when it comes round to it: ${(error as Error).message}`);
      return false;
    }
  }
}
