import { timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InvalidationBus } from '../common/invalidation-bus';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { bearerToken, hashApiKey } from './api-key';
import { Principal } from './principal';

interface CacheEntry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Resolves bearer keys to principals. Hot callers (the config poll) hit an in-memory map; revocation
 * evicts the entry at once on every instance that hears the invalidation bus, and entries expire after
 * CACHE_TTL_MS anyway so that instances without a shared bus converge.
 */
@Injectable()
export class ApiKeyAuthenticator {
  static readonly CACHE_TTL_MS = 30_000;
  private static readonly MAX_ENTRIES = 10_000;

  private readonly byHash = new Map<string, CacheEntry>();
  private readonly hashByKeyId = new Map<string, string>();
  /** Counts revocations heard, so a lookup that was in flight during one is not cached. */
  private evictions = 0;

  constructor(
    private readonly organizations: OrganizationsRepository,
    bus: InvalidationBus,
  ) {
    bus.subscribe('apiKey', (keyId) => this.evict(keyId));
  }

  /** The principal for an Authorization header, or null when the key is missing, unknown or revoked. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    const token = bearerToken(authorization);
    if (!token) return null;
    const keyHash = hashApiKey(token);
    const cached = this.byHash.get(keyHash);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;

    const evictionsBefore = this.evictions;
    const key = await this.organizations.findActiveApiKeyByHash(keyHash);
    // The row was found through an index on the hash; compare again in constant time before trusting it.
    if (!key || !timingSafeEqual(Buffer.from(key.keyHash), Buffer.from(keyHash))) return null;
    const principal: Principal = {
      keyId: key.id,
      organizationId: key.organizationId,
      permissions: new Set(key.permissions),
    };
    // A revocation heard during the lookup may be of this key, read just before it committed: answer this
    // request, which started first, but do not keep the key.
    if (this.evictions === evictionsBefore) this.remember(keyHash, principal);
    return principal;
  }

  /** Synchronous lookup for the poll's lean path: the cached principal, or undefined on a miss. */
  cached(authorization: string | undefined): Principal | undefined {
    const token = bearerToken(authorization);
    if (!token) return undefined;
    const cached = this.byHash.get(hashApiKey(token));
    return cached && cached.expiresAt > Date.now() ? cached.principal : undefined;
  }

  evict(keyId: string): void {
    this.evictions += 1;
    const keyHash = this.hashByKeyId.get(keyId);
    if (keyHash === undefined) return;
    this.byHash.delete(keyHash);
    this.hashByKeyId.delete(keyId);
  }

  private remember(keyHash: string, principal: Principal): void {
    if (this.byHash.size >= ApiKeyAuthenticator.MAX_ENTRIES) {
      const oldest = this.byHash.keys().next().value as string;
      this.hashByKeyId.delete(this.byHash.get(oldest)!.principal.keyId);
      this.byHash.delete(oldest);
    }
    this.byHash.set(keyHash, { principal, expiresAt: Date.now() + ApiKeyAuthenticator.CACHE_TTL_MS });
    this.hashByKeyId.set(principal.keyId, keyHash);
  }
}
