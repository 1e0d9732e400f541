import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { ChangeFeed, FeedRead } from '../invalidation/change-feed';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { bearerToken, hashApiKey, isApiKeyShaped } from './api-key';
import { ApiKeyIndex, IndexableKey } from './api-key-index';
import { TokenMisses } from './token-misses';
import { ApiKeysRepository, ChangedApiKey } from './api-keys.repository';
import { Principal } from './principal';

/**
 * Resolves bearer keys to principals from memory: every instance holds every live key (ApiKeyIndex), loaded by the
 * change feed's first read before the app serves, and kept true by the invalidation bus (a revocation drops the key
 * at once on every instance that hears it; an issue is announced so that others read it) and by the change feed's
 * reads (what the bus lost, within ChangeFeed.PERIOD_MS). No request costs a database round trip of its own:
 * - a key in the index answers at once;
 * - a token missing from it waits for the feed's catch-up read, which starts after the request arrived (so a key
 *   issued on another instance a moment ago is found) and which every waiting request shares, at most one a second
 *   per instance; a token still missing then is remembered as missing for TokenMisses.TTL_MS;
 * - a token that cannot be a key (wrong prefix or length) is refused without either.
 * While the database is away the index keeps answering for every key it holds: no revocation can commit meanwhile.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly misses = new TokenMisses();
  /** Keys revoked since the feed's last read was applied: a read that was in flight may still show them live. */
  private revokedSinceRead = new Set<string>();
  private readonly revocationListeners: Array<(keyId: string) => void> = [];

  constructor(
    private readonly index: ApiKeyIndex,
    private readonly feed: ChangeFeed,
    bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    feed.register<ChangedApiKey>({ sql: ApiKeysRepository.CHANGED_SINCE, apply: (keys, read) => this.applyRead(keys, read) });
    bus.subscribe('apiKey', (keyId) => this.revoked(keyId));
    bus.subscribe('apiKeyIssued', () => void this.feed.catchUp().catch(() => undefined));
  }

  /** The principal for an Authorization header, or null when the key is missing, unknown or revoked. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return null;
    const keyHash = hashApiKey(token);
    let entry = this.index.ofHash(keyHash);
    if (entry === undefined) {
      if (this.misses.has(keyHash, this.clock.now())) return null;
      await this.feed.catchUp();
      entry = this.index.ofHash(keyHash);
      if (entry === undefined) {
        this.misses.remember(keyHash, this.clock.now());
        return null;
      }
    }
    this.index.rememberHeader(authorization!, entry);
    return entry.principal;
  }

  /** The principal of a live key named by id (a signed stream token), or null once it is revoked. */
  async activeKey(organizationId: string, keyId: string): Promise<Principal | null> {
    let entry = this.index.ofId(keyId);
    if (entry === undefined) {
      await this.feed.catchUp();
      entry = this.index.ofId(keyId);
    }
    return entry !== undefined && entry.principal.organizationId === organizationId ? entry.principal : null;
  }

  /** Synchronous lookup for the poll's lean path: the principal of a key in the index, or undefined. */
  cached(authorization: string | undefined): Principal | undefined {
    if (authorization === undefined) return undefined;
    const known = this.index.ofHeader(authorization);
    if (known !== undefined) return known.principal;
    const token = bearerToken(authorization);
    if (!token || !isApiKeyShaped(token)) return undefined;
    const entry = this.index.ofHash(hashApiKey(token));
    if (entry === undefined) return undefined;
    this.index.rememberHeader(authorization, entry);
    return entry.principal;
  }

  /** `listener` hears of every key revoked, whether the bus or the change feed told of it (the stream hub ends its streams). */
  onRevoked(listener: (keyId: string) => void): void {
    this.revocationListeners.push(listener);
  }

  /** A key was revoked (here or on another instance): it stops answering at once. */
  revoked(keyId: string): void {
    this.revokedSinceRead.add(keyId);
    this.drop(keyId);
  }

  private drop(keyId: string): void {
    const held = this.index.ofId(keyId) !== undefined;
    this.index.drop(keyId);
    if (held) for (const listener of this.revocationListeners) listener(keyId);
  }

  private applyRead(keys: ChangedApiKey[], read: FeedRead): void {
    const revoked = this.revokedSinceRead;
    this.revokedSinceRead = new Set();
    const live = (key: IndexableKey) => !revoked.has(key.id);
    if (read.full) return this.index.replaceAll(keys.filter((key) => key.live && live(key)));
    for (const key of keys) {
      if (key.live && live(key)) this.index.add(key);
      else if (!key.live) this.drop(key.id);
    }
  }
}
