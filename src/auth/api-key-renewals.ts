import type { Clock } from '../common/clock';
import { isDatabaseUnavailable } from '../database/database-errors';
import { ApiKeyCache, CachedKey } from './api-key-cache';
import { Principal } from './principal';

/**
 * A key in use never expires under its pollers: in the last REFRESH_AHEAD_MS of an entry's life, a hit starts
 * one background lookup that renews it (or drops it if the key is gone). Without this, every connection of a busy
 * key missed at once every 30 s, and the database lookups that piled up stalled the poll for hundreds of
 * milliseconds.
 *
 * The entry is renewed only if it is still the one cached when the answer comes: a revocation heard meanwhile has
 * dropped it, and then the answer (read before the revocation committed, perhaps) is not kept. A key no longer
 * found is dropped. While the database is unreachable the entry lives on, REFRESH_AHEAD_MS at a time (no
 * revocation can commit meanwhile), so keys already authenticated keep polling; any other error leaves it to
 * expire.
 */
export class ApiKeyRenewals {
  static readonly AHEAD_MS = 5_000;

  /** `find` looks a key hash up again (null: no longer active). */
  constructor(
    private readonly cache: ApiKeyCache,
    private readonly find: (keyHash: string) => Promise<Principal | null>,
    private readonly clock: Clock,
  ) {}

  /** A hit on a live entry at `now`: near its end, starts its one renewal. */
  hit(entry: CachedKey, now: number): void {
    if (!entry.refreshing && entry.expiresAt - now < ApiKeyRenewals.AHEAD_MS) this.renew(entry);
  }

  private renew(entry: CachedKey): void {
    entry.refreshing = true;
    this.find(entry.keyHash).then(
      (principal) => {
        entry.refreshing = false;
        if (!this.cache.holds(entry)) return;
        if (principal === null) return this.cache.drop(entry.keyHash);
        this.cache.renew(entry, principal, this.clock.now());
      },
      (error: unknown) => {
        entry.refreshing = false;
        if (this.cache.holds(entry) && isDatabaseUnavailable(error)) entry.expiresAt = this.clock.now() + ApiKeyRenewals.AHEAD_MS;
      },
    );
  }
}
