import { Injectable } from '@nestjs/common';
import { Permission } from './permission';
import { ApiKeyPrincipal } from './principal';

/** What the index needs of a key: the row's id, organization, hash and permissions. */
export interface IndexableKey {
  id: string;
  organizationId: string;
  keyHash: string;
  permissions: readonly Permission[];
}

/** A live key in the index. */
export interface IndexedKey {
  readonly keyHash: string;
  readonly principal: ApiKeyPrincipal;
  /** The raw Authorization headers that lead to this key in the header index, dropped with it. */
  headers: string[];
}

/**
 * Every live API key of the deployment, in memory on each instance: by the SHA-256 of the key (what a request's
 * token is looked up by), by id (revocations, stream tokens), and by the raw Authorization headers already seen,
 * so that the poll's lean path finds a key without parsing or hashing. ApiKeyAuthenticator keeps it true (loaded
 * by the change feed's first read, then its reads and the invalidation bus); OrganizationsService adds a key it
 * has just issued, so that it works here at once.
 *
 * Memory: about 300 bytes per key, 28 MiB per 100,000 (bench/key-index-memory.js); the permission
 * sets and organization ids are shared between keys. The header index is bounded: MAX_HEADERS headers, at most
 * MAX_HEADERS_PER_KEY spellings of one key (case of `Bearer`, spaces), none longer than MAX_HEADER_LENGTH; past
 * that a header is served through its hash, never kept.
 */
@Injectable()
export class ApiKeyIndex {
  static readonly MAX_HEADERS = 10_000;
  static readonly MAX_HEADER_LENGTH = 256;
  static readonly MAX_HEADERS_PER_KEY = 4;

  private readonly byHash = new Map<string, IndexedKey>();
  private readonly byId = new Map<string, IndexedKey>();
  private readonly byHeader = new Map<string, IndexedKey>();
  /** One permission set per distinct list, and one string per organization id, shared by every key that has it. */
  private readonly permissionSets = new Map<string, ReadonlySet<Permission>>();
  private readonly organizationIds = new Map<string, string>();

  get size(): number {
    return this.byHash.size;
  }

  ofHeader(authorization: string): IndexedKey | undefined {
    return this.byHeader.get(authorization);
  }

  ofHash(keyHash: string): IndexedKey | undefined {
    return this.byHash.get(keyHash);
  }

  ofId(keyId: string): IndexedKey | undefined {
    return this.byId.get(keyId);
  }

  /** A live key: added, or kept as it is when already there (a key's hash, organization and permissions never change). */
  add(key: IndexableKey): void {
    if (this.byId.has(key.id)) return;
    const principal: ApiKeyPrincipal = {
      type: 'apiKey',
      id: key.id,
      organizationId: this.organizationId(key.organizationId),
      permissions: this.permissionSet(key.permissions),
    };
    const entry: IndexedKey = { keyHash: key.keyHash, principal, headers: [] };
    this.byHash.set(key.keyHash, entry);
    this.byId.set(key.id, entry);
  }

  /** A revoked key: gone, with every header that led to it. */
  drop(keyId: string): void {
    const entry = this.byId.get(keyId);
    if (entry === undefined) return;
    for (const header of entry.headers) this.byHeader.delete(header);
    entry.headers = [];
    this.byId.delete(keyId);
    this.byHash.delete(entry.keyHash);
  }

  /** Every live key, in place of what the index held. */
  replaceAll(keys: Iterable<IndexableKey>): void {
    this.byHash.clear();
    this.byId.clear();
    this.byHeader.clear();
    for (const key of keys) this.add(key);
  }

  /** Maps a raw header to the key it carries, within the bounds; the first spellings win, the oldest header goes when full. */
  rememberHeader(authorization: string, entry: IndexedKey): void {
    if (authorization.length > ApiKeyIndex.MAX_HEADER_LENGTH || this.byHeader.has(authorization)) return;
    if (entry.headers.length >= ApiKeyIndex.MAX_HEADERS_PER_KEY || this.byId.get(entry.principal.id) !== entry) return;
    if (this.byHeader.size >= ApiKeyIndex.MAX_HEADERS) {
      const oldest = this.byHeader.keys().next().value as string;
      const owner = this.byHeader.get(oldest)!;
      owner.headers.splice(owner.headers.indexOf(oldest), 1);
      this.byHeader.delete(oldest);
    }
    this.byHeader.set(authorization, entry);
    entry.headers.push(authorization);
  }

  private permissionSet(permissions: readonly Permission[]): ReadonlySet<Permission> {
    const name = [...permissions].sort().join(',');
    let set = this.permissionSets.get(name);
    if (set === undefined) {
      set = new Set(permissions);
      this.permissionSets.set(name, set);
    }
    return set;
  }

  private organizationId(organizationId: string): string {
    let shared = this.organizationIds.get(organizationId);
    if (shared === undefined) {
      shared = organizationId;
      this.organizationIds.set(organizationId, shared);
    }
    return shared;
  }
}
