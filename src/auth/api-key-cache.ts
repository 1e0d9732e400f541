import { Principal } from './principal';

/** A key found in the database, answered from memory until `expiresAt`. */
export interface CachedKey {
  readonly keyHash: string;
  principal: Principal;
  /** Clock time (ms) after which the entry no longer answers; 0 once it is dropped, so a reference still held anywhere stops answering at once. */
  expiresAt: number;
  /** The raw Authorization headers that lead to this entry in the header index, dropped with it. */
  headers: string[];
  /** A background lookup is renewing the entry (ApiKeyRenewals). */
  refreshing: boolean;
}

/**
 * The keys found valid, by the SHA-256 of the key, for CACHE_TTL_MS each; and an index of the raw Authorization
 * headers that led to them, so the poll's lean path finds a key it has seen without parsing or hashing.
 *
 * A header is only ever mapped to an entry that a hash lookup found, and it dies with that entry: dropping one
 * (revocation, the size bound) zeroes its expiry and deletes its headers. Both maps are bounded (the oldest
 * go first); a header longer than any real `Bearer fsk_…`, and spellings past a few per key (case of `Bearer`,
 * spaces), are served through the hash alone, never kept.
 */
export class ApiKeyCache {
  static readonly TTL_MS = 30_000;
  static readonly MAX_ENTRIES = 10_000;
  static readonly MAX_HEADER_LENGTH = 256;
  static readonly MAX_HEADERS_PER_ENTRY = 4;

  private readonly byHash = new Map<string, CachedKey>();
  private readonly byHeader = new Map<string, CachedKey>();
  private readonly hashByKeyId = new Map<string, string>();

  /** The live entry a raw header leads to, if it was remembered. */
  ofHeader(authorization: string, now: number): CachedKey | undefined {
    return live(this.byHeader.get(authorization), now);
  }

  /** The live entry of a key hash. */
  ofHash(keyHash: string, now: number): CachedKey | undefined {
    return live(this.byHash.get(keyHash), now);
  }

  /** Whether `entry` is still the one cached for its key (no revocation or newer lookup replaced it). */
  holds(entry: CachedKey): boolean {
    return this.byHash.get(entry.keyHash) === entry;
  }

  /** Caches a key found valid at `now`, in place of any entry it had; the oldest entry goes when full. */
  remember(keyHash: string, principal: Principal, now: number): CachedKey {
    if (this.byHash.has(keyHash)) this.drop(keyHash);
    if (this.byHash.size >= ApiKeyCache.MAX_ENTRIES) this.drop(this.byHash.keys().next().value as string);
    const entry: CachedKey = { keyHash, principal, expiresAt: now + ApiKeyCache.TTL_MS, headers: [], refreshing: false };
    this.byHash.set(keyHash, entry);
    this.hashByKeyId.set(principal.keyId, keyHash);
    return entry;
  }

  /** A lookup at `now` found the key again: it answers for another CACHE_TTL_MS. */
  renew(entry: CachedKey, principal: Principal, now: number): void {
    entry.principal = principal;
    entry.expiresAt = now + ApiKeyCache.TTL_MS;
  }

  /** Maps a raw header to a live entry, within the bounds; the first spellings win. */
  rememberHeader(authorization: string, entry: CachedKey): void {
    if (authorization.length > ApiKeyCache.MAX_HEADER_LENGTH) return;
    const previous = this.byHeader.get(authorization);
    if (previous === entry || entry.headers.length >= ApiKeyCache.MAX_HEADERS_PER_ENTRY) return;
    if (previous !== undefined) previous.headers.splice(previous.headers.indexOf(authorization), 1);
    else if (this.byHeader.size >= ApiKeyCache.MAX_ENTRIES) {
      const oldest = this.byHeader.keys().next().value as string;
      const owner = this.byHeader.get(oldest)!;
      owner.headers.splice(owner.headers.indexOf(oldest), 1);
      this.byHeader.delete(oldest);
    }
    this.byHeader.set(authorization, entry);
    entry.headers.push(authorization);
  }

  /** Forgets the key with this id (revoked), if it is cached. */
  dropKey(keyId: string): void {
    const keyHash = this.hashByKeyId.get(keyId);
    if (keyHash !== undefined) this.drop(keyHash);
  }

  /** Forgets every key. */
  dropAll(): void {
    for (const keyHash of [...this.byHash.keys()]) this.drop(keyHash);
  }

  /** Forgets a hashed key and every header that led to it; a reference still held stops answering. */
  drop(keyHash: string): void {
    const entry = this.byHash.get(keyHash);
    if (entry === undefined) return;
    entry.expiresAt = 0;
    for (const header of entry.headers) this.byHeader.delete(header);
    entry.headers = [];
    this.byHash.delete(keyHash);
    if (this.hashByKeyId.get(entry.principal.keyId) === keyHash) this.hashByKeyId.delete(entry.principal.keyId);
  }
}

function live(entry: CachedKey | undefined, now: number): CachedKey | undefined {
  return entry === undefined || entry.expiresAt <= now ? undefined : entry;
}
