import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { Sql } from '../database/sql';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { ApiKey, bearerToken, hashApiKey, isApiKeyShaped } from './api-key';
import { ApiKeyBatches } from './api-key-batches';
import { ApiKeyCache, CachedKey } from './api-key-cache';
import { InFlightLookups } from './api-key-lookups';
import { ApiKeyMisses } from './api-key-misses';
import { ApiKeyRenewals } from './api-key-renewals';
import { ApiKeysRepository } from './api-keys.repository';
import { Principal } from './principal';

/**
 * Resolves bearer keys to principals. Hot callers (the config poll) hit an in-memory map; revocation
 * evicts the entry at once on every instance that hears the invalidation bus, and entries expire after
 * CACHE_TTL_MS anyway so that instances without a shared bus converge. Each job has its own file:
 * - api-key-cache.ts: the keys found valid, and the index of raw Authorization headers the poll's lean path
 *   reads first (a hit needs no parsing and no SHA-256);
 * - api-key-renewals.ts: a key in use is renewed in the background before it expires;
 * - api-key-lookups.ts: concurrent misses of one key share one lookup, unless a revocation came between;
 * - api-key-misses.ts: a key found missing or revoked is remembered as such for MISS_TTL_MS;
 * - api-key-batches.ts: lookups go to the database in batches, one query each.
 * A token that cannot be a key (wrong prefix or length) is refused without a lookup.
 */
@Injectable()
export class ApiKeyAuthenticator {
  static readonly CACHE_TTL_MS = ApiKeyCache.TTL_MS;
  static readonly REFRESH_AHEAD_MS = ApiKeyRenewals.AHEAD_MS;
  static readonly MISS_TTL_MS = ApiKeyMisses.TTL_MS;
  static readonly BATCH_WINDOW_MS = ApiKeyBatches.WINDOW_MS;

  private readonly cache = new ApiKeyCache();
  private readonly misses = new ApiKeyMisses();
  private readonly lookups = new InFlightLookups<Principal | null>();
  private readonly batches: ApiKeyBatches;
  private readonly renewals: ApiKeyRenewals;

  constructor(
    private readonly sql: Sql,
    private readonly apiKeys: ApiKeysRepository,
    bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.batches = new ApiKeyBatches((keyHashes) => this.apiKeys.findActiveApiKeysByHashes(this.sql, keyHashes));
    this.renewals = new ApiKeyRenewals(this.cache, (keyHash) => this.find(keyHash), clock);
    bus.subscribe('apiKey', (keyId) => this.evict(keyId));
    bus.onReset(() => this.evictAll());
  }

  /** The principal for an Authorization header, or null when the key is missing, unknown or revoked. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return null;
    const keyHash = hashApiKey(token);
    const now = this.clock.now();
    const cached = this.hit(this.cache.ofHash(keyHash, now), now);
    if (cached) {
      this.cache.rememberHeader(authorization!, cached);
      return cached.principal;
    }
    if (this.misses.has(keyHash, now)) return null;
    const principal = await this.lookUp(keyHash);
    const entry = this.cache.ofHash(keyHash, this.clock.now());
    if (principal && entry && entry.principal === principal) this.cache.rememberHeader(authorization!, entry);
    return principal;
  }

  /** The principal of a key named by id (a signed stream token), or null once it is revoked; not cached. */
  async activeKey(organizationId: string, keyId: string): Promise<Principal | null> {
    const key = await this.apiKeys.findActiveApiKeyById(this.sql, organizationId, keyId);
    return key ? principalOf(key) : null;
  }

  /** Synchronous lookup for the poll's lean path: the cached principal, or undefined on a miss. */
  cached(authorization: string | undefined): Principal | undefined {
    if (authorization === undefined) return undefined;
    const now = this.clock.now();
    const known = this.hit(this.cache.ofHeader(authorization, now), now);
    if (known !== undefined) return known.principal;
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return undefined;
    const cached = this.hit(this.cache.ofHash(hashApiKey(token), now), now);
    if (cached === undefined) return undefined;
    this.cache.rememberHeader(authorization, cached);
    return cached.principal;
  }

  evict(keyId: string): void {
    this.lookups.revoked();
    this.cache.dropKey(keyId);
  }

  /** The bus may have missed revocations: forget every key. */
  evictAll(): void {
    this.lookups.revoked();
    this.cache.dropAll();
  }

  /** A live entry answers; near its expiry, the hit also starts its renewal. */
  private hit(entry: CachedKey | undefined, now: number): CachedKey | undefined {
    if (entry !== undefined) this.renewals.hit(entry, now);
    return entry;
  }

  /**
   * A database lookup of a key not cached, shared by concurrent misses of it. A revocation heard during the
   * lookup may be of this key, read just before it committed: the requests that started first get the answer,
   * but the key is not kept.
   */
  private lookUp(keyHash: string): Promise<Principal | null> {
    return this.lookups.run(keyHash, (current) =>
      this.find(keyHash).then((principal) => {
        if (principal && current()) this.cache.remember(keyHash, principal, this.clock.now());
        if (!principal) this.misses.remember(keyHash, this.clock.now());
        return principal;
      }),
    );
  }

  private async find(keyHash: string): Promise<Principal | null> {
    const key = await this.batches.find(keyHash);
    // The row was found through an index on the hash; compare again in constant time before trusting it.
    if (!key || !timingSafeEqual(Buffer.from(key.keyHash), Buffer.from(keyHash))) return null;
    return principalOf(key);
  }
}

function principalOf(key: ApiKey): Principal {
  return { keyId: key.id, organizationId: key.organizationId, permissions: new Set(key.permissions) };
}
