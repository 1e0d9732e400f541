import type { ServerResponse } from 'node:http';

export interface OpenStream {
  response: ServerResponse;
  organizationId: string;
  keyId: string;
  openedAt: number;
  /** When something was last written to it: a heartbeat is due HEARTBEAT_MS after that. */
  wroteAt: number;
  /** The ETag of the last event sent: a change that leaves the payload's ETag as it was sends nothing. */
  etag: string | null;
  /** Its row in StreamSlots; undefined when it was opened while the database was away (counted here only). */
  slotId: string | undefined;
  /** Opened with a session: stops following it (SessionStreams.watch). */
  unwatch?: () => void;
}

/** What the index reads of a stream. */
export interface IndexedStream {
  readonly organizationId: string;
  readonly keyId: string;
}

/**
 * The open streams of this instance, by organization (whose change reaches them) and by key (whose revocation
 * ends them, and whose cap counts them). The lists handed out are copies: ending a stream while going through
 * them is safe.
 */
export class OpenStreams<S extends IndexedStream = OpenStream> {
  private readonly byOrganization = new Map<string, Set<S>>();
  private readonly byKey = new Map<string, Set<S>>();

  get size(): number {
    let count = 0;
    for (const streams of this.byKey.values()) count += streams.size;
    return count;
  }

  get isEmpty(): boolean {
    return this.byKey.size === 0;
  }

  countOfKey(keyId: string): number {
    return this.byKey.get(keyId)?.size ?? 0;
  }

  hasOrganization(organizationId: string): boolean {
    return this.byOrganization.has(organizationId);
  }

  organizations(): string[] {
    return [...this.byOrganization.keys()];
  }

  ofOrganization(organizationId: string): S[] {
    return [...(this.byOrganization.get(organizationId) ?? [])];
  }

  ofKey(keyId: string): S[] {
    return [...(this.byKey.get(keyId) ?? [])];
  }

  /** Every stream, key by key. */
  all(): S[] {
    return [...this.byKey.values()].flatMap((streams) => [...streams]);
  }

  add(stream: S): void {
    add(this.byOrganization, stream.organizationId, stream);
    add(this.byKey, stream.keyId, stream);
  }

  /**
   * Takes the stream out. `removed` is false when it was not in (already removed: a stream ended by the hub
   * also closes); `lastOfOrganization` is true when it was its organization's last stream here.
   */
  remove(stream: S): { removed: boolean; lastOfOrganization: boolean } {
    const lastOfOrganization = remove(this.byOrganization, stream.organizationId, stream) && !this.byOrganization.has(stream.organizationId);
    const removed = remove(this.byKey, stream.keyId, stream);
    return { removed, lastOfOrganization };
  }
}

function add<S>(map: Map<string, Set<S>>, id: string, stream: S): void {
  const set = map.get(id) ?? new Set<S>();
  set.add(stream);
  map.set(id, set);
}

function remove<S>(map: Map<string, Set<S>>, id: string, stream: S): boolean {
  const set = map.get(id);
  if (!set?.delete(stream)) return false;
  if (set.size === 0) map.delete(id);
  return true;
}
