import type { Readable } from 'node:stream';

export const OBJECT_STORE = Symbol('OBJECT_STORE');

/** Inclusive byte offsets, as in an HTTP Range. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  key: string;
  lastModified: Date;
}

/**
 * Where file bytes live. Keys are `<organizationId>/<itemId>`, made by the service only.
 * Both drivers stream: neither holds a whole file in memory (the S3 driver holds at most one part).
 */
export interface ObjectStore {
  /**
   * Stores `body` under `key` so that the object either appears whole once this resolves, or not at all
   * if it rejects (a failed or aborted body leaves nothing readable behind). `size` is the exact byte
   * count when the caller knows it.
   */
  put(key: string, body: Readable, size?: number): Promise<void>;
  /** The object's bytes, or only `range`; null when there is no such object. */
  read(key: string, range?: ByteRange): Promise<Readable | null>;
  /** Idempotent: deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Committed objects in ascending key order (by code unit, which is S3's byte order for the ASCII keys the
   * service makes), only those strictly after `after` when it is given: the sweeper's search for objects
   * without a row reads one page of this per run and resumes after the last key it saw. A consumer that
   * stops early costs no more than what it read (plus what the driver fetched ahead of it).
   */
  list(after?: string): AsyncIterable<StoredObject>;
  /** Removes temporary leftovers of uploads that died (temp files, incomplete parts) older than `before`. */
  sweepTemporary(before: Date): Promise<number>;
  /** Resolves when the store can be used now (readiness), rejects saying why it cannot. */
  checkUsable(): Promise<void>;
}

/** A key the service never makes (no organization has the nil UUID): reading it asks the store and finds nothing. */
export const PROBE_KEY = '00000000-0000-0000-0000-000000000000/00000000-0000-0000-0000-000000000000';

const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const UUID = new RegExp(`^${UUID_SOURCE}$`, 'i');
/** Lower case only: objectKeyFor lowercases, so a key in another case is not one the service made. */
const OBJECT_KEY = new RegExp(`^${UUID_SOURCE}/${UUID_SOURCE}$`);

/** A UUID in the 8-4-4-4-12 hex form, either case (ids in URLs the service signed or handed out). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function objectKeyFor(organizationId: string, itemId: string): string {
  return `${organizationId}/${itemId}`.toLowerCase();
}

/** Keys come from the database, but a path built from one must never leave the store's directory. */
export function assertObjectKey(key: string): void {
  if (!OBJECT_KEY.test(key)) throw new Error(`Not an object key: ${JSON.stringify(key)}`);
}

/** The item id inside a key, or null for something that is not one of ours. */
export function itemIdOfKey(key: string): string | null {
  return OBJECT_KEY.test(key) ? key.slice(37) : null;
}
