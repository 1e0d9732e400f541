import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { isDatabaseUnavailable } from '../database/database-errors';
import { ApiKey, bearerToken, hashApiKey, isApiKeyShaped } from './api-key';
import { ApiKeysRepository } from './api-keys.repository';
import { Principal } from './principal';

interface CacheEntry {
  keyHash: string;
  principal: Principal;
  /** 0 once the entry is evicted, so a reference still held anywhere stops answering at once. */
  expiresAt: number;
  /** The raw Authorization headers that lead to this entry in `byHeader`, dropped with it. */
  headers: string[];
  /** A background lookup is renewing the entry (see REFRESH_AHEAD_MS). */
  refreshing: boolean;
}

/** Lookups waiting for the next batch query, by key hash. */
type Batch = Map<string, { resolve(key: ApiKey | undefined): void; reject(error: unknown): void }[]>;

/** A database lookup in flight, and how many revocations had been heard when it started. */
interface Lookup {
  evictions: number;
  result: Promise<Principal | null>;
}

/**
 * Resolves bearer keys to principals. Hot callers (the config poll) hit an in-memory map; revocation
 * evicts the entry at once on every instance that hears the invalidation bus, and entries expire after
 * CACHE_TTL_MS anyway so that instances without a shared bus converge.
 *
 * The poll's lean path looks the raw Authorization header up first (`byHeader`): a hit needs no parsing
 * and no SHA-256. A header is only ever mapped to an entry that a hash lookup found, and it dies with that
 * entry: eviction (revocation, expiry, the size bound) zeroes the entry's expiry and deletes its headers.
 *
 * A key in use never expires under its pollers: in the last REFRESH_AHEAD_MS of an entry's life, a hit
 * starts one background lookup that renews it (or drops it if the key is gone), and concurrent misses of
 * one key share one lookup. Without this, every connection of a busy key missed at once every 30 s, and
 * the database lookups that piled up stalled the poll for hundreds of milliseconds.
 *
 * What costs the database nothing, for floods of bad keys:
 * - a token that cannot be a key (wrong prefix or length) is refused without a lookup;
 * - a key found missing or revoked is remembered as a miss for MISS_TTL_MS (bounded like the hits). Both
 *   states are final (a revoked key is never restored, and a key is only ever issued fresh: its token
 *   cannot have been sent before it existed), so neither revocation nor creation can make a miss wrong;
 * - lookups go to the database in batches, one query each: a lone lookup goes out at the end of the event
 *   loop's turn, but while another batch is in flight, lookups gather for BATCH_WINDOW_MS first. A flood,
 *   or every game server reconnecting after a deploy, is then a few queries rather than one per request.
 */
@Injectable()
export class ApiKeyAuthenticator {
  static readonly CACHE_TTL_MS = 30_000;
  static readonly REFRESH_AHEAD_MS = 5_000;
  static readonly MISS_TTL_MS = 10_000;
  static readonly BATCH_WINDOW_MS = 10;
  /** Hashes per batch query; more wait for the next one. */
  private static readonly MAX_BATCH = 500;
  private static readonly MAX_ENTRIES = 10_000;
  /** Longer headers than any real `Bearer fsk_…` are served through the hash alone, never kept. */
  private static readonly MAX_HEADER_LENGTH = 256;
  /** Spellings of one key's header kept per entry (case of `Bearer`, spaces); more go through the hash. */
  private static readonly MAX_HEADERS_PER_ENTRY = 4;

  private readonly byHash = new Map<string, CacheEntry>();
  private readonly byHeader = new Map<string, CacheEntry>();
  private readonly hashByKeyId = new Map<string, string>();
  private readonly lookups = new Map<string, Lookup>();
  /** Key hashes found missing or revoked, with when to forget them; oldest first. */
  private readonly misses = new Map<string, number>();
  private batch: Batch | undefined;
  private batchesInFlight = 0;
  /** Counts revocations heard, so a lookup that was in flight during one is not cached, nor joined. */
  private evictions = 0;

  constructor(
    private readonly apiKeys: ApiKeysRepository,
    bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    bus.subscribe('apiKey', (keyId) => this.evict(keyId));
    bus.onReset(() => this.evictAll());
  }

  /** The principal for an Authorization header, or null when the key is missing, unknown or revoked. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return null;
    const keyHash = hashApiKey(token);
    const now = this.clock.now();
    const cached = this.live(this.byHash.get(keyHash), now);
    if (cached) {
      this.rememberHeader(authorization!, cached);
      return cached.principal;
    }
    if (this.isKnownMiss(keyHash, now)) return null;
    const principal = await this.lookUp(keyHash);
    const entry = this.byHash.get(keyHash);
    if (principal && entry && entry.principal === principal && entry.expiresAt > this.clock.now()) this.rememberHeader(authorization!, entry);
    return principal;
  }

  /** The principal of a key named by id (a signed stream token), or null once it is revoked; not cached. */
  async activeKey(organizationId: string, keyId: string): Promise<Principal | null> {
    const key = await this.apiKeys.findActiveApiKeyById(organizationId, keyId);
    return key ? principalOf(key) : null;
  }

  /** Synchronous lookup for the poll's lean path: the cached principal, or undefined on a miss. */
  cached(authorization: string | undefined): Principal | undefined {
    if (authorization === undefined) return undefined;
    const now = this.clock.now();
    const known = this.live(this.byHeader.get(authorization), now);
    if (known !== undefined) return known.principal;
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return undefined;
    const cached = this.live(this.byHash.get(hashApiKey(token)), now);
    if (cached === undefined) return undefined;
    this.rememberHeader(authorization, cached);
    return cached.principal;
  }

  evict(keyId: string): void {
    this.evictions += 1;
    const keyHash = this.hashByKeyId.get(keyId);
    if (keyHash === undefined) return;
    this.drop(keyHash);
  }

  /** The bus may have missed revocations: forget every key. */
  evictAll(): void {
    this.evictions += 1;
    for (const keyHash of [...this.byHash.keys()]) this.drop(keyHash);
  }

  /** The entry if it has not expired; near its expiry, also starts its renewal. */
  private live(entry: CacheEntry | undefined, now: number): CacheEntry | undefined {
    if (entry === undefined || entry.expiresAt <= now) return undefined;
    if (!entry.refreshing && entry.expiresAt - now < ApiKeyAuthenticator.REFRESH_AHEAD_MS) this.refresh(entry);
    return entry;
  }

  /**
   * Looks a cached key up again. The entry is renewed only if it is still the one cached when the answer
   * comes: a revocation heard meanwhile has dropped it, and then the answer (read before the revocation
   * committed, perhaps) is not kept. A key no longer found is dropped. While the database is unreachable
   * the entry lives on (no revocation can commit meanwhile), so keys already authenticated keep polling;
   * any other error leaves it to expire.
   */
  private refresh(entry: CacheEntry): void {
    entry.refreshing = true;
    this.find(entry.keyHash).then(
      (principal) => {
        entry.refreshing = false;
        if (this.byHash.get(entry.keyHash) !== entry) return;
        if (principal === null) return this.drop(entry.keyHash);
        entry.principal = principal;
        entry.expiresAt = this.clock.now() + ApiKeyAuthenticator.CACHE_TTL_MS;
      },
      (error: unknown) => {
        entry.refreshing = false;
        if (this.byHash.get(entry.keyHash) === entry && isDatabaseUnavailable(error)) {
          entry.expiresAt = this.clock.now() + ApiKeyAuthenticator.REFRESH_AHEAD_MS;
        }
      },
    );
  }

  /**
   * One database lookup per key at a time. A lookup is joined only if no revocation was heard since it
   * started: one that started earlier may have read a key revoked since, and only the requests that were
   * already waiting for it may have that answer.
   */
  private lookUp(keyHash: string): Promise<Principal | null> {
    const pending = this.lookups.get(keyHash);
    if (pending !== undefined && pending.evictions === this.evictions) return pending.result;
    const evictionsBefore = this.evictions;
    const result = this.find(keyHash).then((principal) => {
      // A revocation heard during the lookup may be of this key, read just before it committed: answer the
      // requests that started first, but do not keep the key.
      if (principal && this.evictions === evictionsBefore) this.remember(keyHash, principal);
      if (!principal) this.rememberMiss(keyHash);
      return principal;
    });
    const lookup = { evictions: evictionsBefore, result };
    this.lookups.set(keyHash, lookup);
    const done = () => {
      if (this.lookups.get(keyHash) === lookup) this.lookups.delete(keyHash);
    };
    result.then(done, done);
    return result;
  }

  private async find(keyHash: string): Promise<Principal | null> {
    const key = await this.batched(keyHash);
    // The row was found through an index on the hash; compare again in constant time before trusting it.
    if (!key || !timingSafeEqual(Buffer.from(key.keyHash), Buffer.from(keyHash))) return null;
    return principalOf(key);
  }

  /** Joins the batch being gathered, which goes out as one query (see the class comment for when). */
  private batched(keyHash: string): Promise<ApiKey | undefined> {
    return new Promise((resolve, reject) => {
      if (this.batch === undefined) {
        this.batch = new Map();
        if (this.batchesInFlight === 0) setImmediate(() => this.sendBatch());
        else setTimeout(() => this.sendBatch(), ApiKeyAuthenticator.BATCH_WINDOW_MS);
      }
      const waiting = this.batch.get(keyHash);
      if (waiting) waiting.push({ resolve, reject });
      else this.batch.set(keyHash, [{ resolve, reject }]);
    });
  }

  private sendBatch(): void {
    const batch = this.batch!;
    this.batch = undefined;
    const hashes = [...batch.keys()];
    for (let start = 0; start < hashes.length; start += ApiKeyAuthenticator.MAX_BATCH) {
      const chunk = hashes.slice(start, start + ApiKeyAuthenticator.MAX_BATCH);
      this.batchesInFlight += 1;
      this.apiKeys.findActiveApiKeysByHashes(chunk).then(
        (keys) => {
          this.batchesInFlight -= 1;
          const byHash = new Map(keys.map((key) => [key.keyHash, key]));
          for (const hash of chunk) for (const waiter of batch.get(hash)!) waiter.resolve(byHash.get(hash));
        },
        (error: unknown) => {
          this.batchesInFlight -= 1;
          for (const hash of chunk) for (const waiter of batch.get(hash)!) waiter.reject(error);
        },
      );
    }
  }

  private isKnownMiss(keyHash: string, now: number): boolean {
    const until = this.misses.get(keyHash);
    if (until === undefined) return false;
    if (until > now) return true;
    this.misses.delete(keyHash);
    return false;
  }

  private rememberMiss(keyHash: string): void {
    this.misses.delete(keyHash);
    if (this.misses.size >= ApiKeyAuthenticator.MAX_ENTRIES) this.misses.delete(this.misses.keys().next().value as string);
    this.misses.set(keyHash, this.clock.now() + ApiKeyAuthenticator.MISS_TTL_MS);
  }

  private remember(keyHash: string, principal: Principal): CacheEntry {
    if (this.byHash.has(keyHash)) this.drop(keyHash);
    if (this.byHash.size >= ApiKeyAuthenticator.MAX_ENTRIES) this.drop(this.byHash.keys().next().value as string);
    const entry: CacheEntry = {
      keyHash,
      principal,
      expiresAt: this.clock.now() + ApiKeyAuthenticator.CACHE_TTL_MS,
      headers: [],
      refreshing: false,
    };
    this.byHash.set(keyHash, entry);
    this.hashByKeyId.set(principal.keyId, keyHash);
    return entry;
  }

  /** Maps a raw header to a live entry, within the bounds; the first spellings win. */
  private rememberHeader(authorization: string, entry: CacheEntry): void {
    if (authorization.length > ApiKeyAuthenticator.MAX_HEADER_LENGTH) return;
    const previous = this.byHeader.get(authorization);
    if (previous === entry || entry.headers.length >= ApiKeyAuthenticator.MAX_HEADERS_PER_ENTRY) return;
    if (previous !== undefined) previous.headers.splice(previous.headers.indexOf(authorization), 1);
    else if (this.byHeader.size >= ApiKeyAuthenticator.MAX_ENTRIES) {
      const oldest = this.byHeader.keys().next().value as string;
      const owner = this.byHeader.get(oldest)!;
      owner.headers.splice(owner.headers.indexOf(oldest), 1);
      this.byHeader.delete(oldest);
    }
    this.byHeader.set(authorization, entry);
    entry.headers.push(authorization);
  }

  /** Forgets a hashed key and every header that led to it; a reference still held stops answering. */
  private drop(keyHash: string): void {
    const entry = this.byHash.get(keyHash);
    if (entry === undefined) return;
    entry.expiresAt = 0;
    for (const header of entry.headers) this.byHeader.delete(header);
    entry.headers = [];
    this.byHash.delete(keyHash);
    if (this.hashByKeyId.get(entry.principal.keyId) === keyHash) this.hashByKeyId.delete(entry.principal.keyId);
  }
}

function principalOf(key: ApiKey): Principal {
  return { keyId: key.id, organizationId: key.organizationId, permissions: new Set(key.permissions) };
}
