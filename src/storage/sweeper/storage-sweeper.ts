import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
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

export interface SweepReport {
  expiredItems: number;
  expiredNonces: number;
  orphanObjects: number;
  temporaryFiles: number;
}

/**
 * Restores "the database and the store agree" after anything that broke it: pending items whose URL
 * expired unused (row first, then bytes, like every delete), nonces of URLs expired for more than the
 * clock-skew margin, objects without a row
 * (a crash between a row delete and its object delete, or between an upload's commit and its row), and
 * temp files of uploads that died. Every step is idempotent, so instances may sweep concurrently.
 */
@Injectable()
export class StorageSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StorageSweeper.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepReport> | null = null;

  constructor(
    private readonly repository: StorageRepository,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((error: Error) => this.logger.error(`sweep failed: ${error.stack ?? error.message}`));
    }, SWEEP_INTERVAL_MS);
    // The sweep must never keep a process alive that is otherwise done.
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One sweep as of `now` (tests pass a later time instead of waiting). Concurrent calls share one run. */
  sweep(now = new Date()): Promise<SweepReport> {
    this.running ??= this.run(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(now: Date): Promise<SweepReport> {
    const report: SweepReport = { expiredItems: 0, expiredNonces: 0, orphanObjects: 0, temporaryFiles: 0 };
    const staleClaim = new Date(now.getTime() - STALE_CLAIM_MS);
    for (;;) {
      const keys = await this.repository.deleteExpiredPending(now, staleClaim, BATCH);
      for (const key of keys) await this.deleteObject(key);
      report.expiredItems += keys.length;
      if (keys.length < BATCH) break;
    }
    report.expiredNonces = await this.repository.deleteExpiredNonces(new Date(now.getTime() - NONCE_CLOCK_SKEW_MS));

    const orphanBefore = new Date(now.getTime() - ORPHAN_GRACE_MS);
    let candidates: string[] = [];
    const flush = async () => {
      const ids = candidates.map((key) => itemIdOfKey(key)).filter((id): id is string => id !== null);
      const existing = await this.repository.existingItemIds(ids);
      for (const key of candidates) {
        const id = itemIdOfKey(key);
        if (id !== null && !existing.has(id) && (await this.deleteObject(key))) report.orphanObjects += 1;
      }
      candidates = [];
    };
    for await (const object of this.store.list()) {
      if (object.lastModified >= orphanBefore || itemIdOfKey(object.key) === null) continue;
      candidates.push(object.key);
      if (candidates.length >= BATCH) await flush();
    }
    await flush();

    report.temporaryFiles = await this.store.sweepTemporary(orphanBefore);
    if (Object.values(report).some((count) => count > 0)) this.logger.log(`swept ${JSON.stringify(report)}`);
    return report;
  }

  /** One object failing to delete must not stop the sweep; without its row it is an orphan next time. */
  private async deleteObject(key: string): Promise<boolean> {
    try {
      await this.store.delete(key);
      return true;
    } catch (error) {
      this.logger.warn(`could not delete ${key}, will retry on the next sweep: ${(error as Error).message}`);
      return false;
    }
  }
}
