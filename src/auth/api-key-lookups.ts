/**
 * One lookup per key at a time: concurrent misses of a key share the one in flight. It is shared only if no
 * revocation was heard since it started: one that started earlier may have read a key revoked since, and only
 * the requests that were already waiting for it may have that answer. For the same reason its answer may be kept
 * (cached) only while `current()` says no revocation was heard since it started.
 */
export class InFlightLookups<T> {
  private readonly pending = new Map<string, { revocations: number; result: Promise<T> }>();
  /** Revocations heard so far (any key, or all of them). */
  private revocations = 0;

  /** A revocation was heard (of one key, or of every key): lookups in flight are shared no more. */
  revoked(): void {
    this.revocations += 1;
  }

  /**
   * The lookup of `key` in flight, if one started since the last revocation; otherwise the one `start` starts,
   * which `current()` tells whether its answer may still be kept.
   */
  run(key: string, start: (current: () => boolean) => Promise<T>): Promise<T> {
    const pending = this.pending.get(key);
    if (pending !== undefined && pending.revocations === this.revocations) return pending.result;
    const revocations = this.revocations;
    const lookup = { revocations, result: start(() => this.revocations === revocations) };
    this.pending.set(key, lookup);
    const done = () => {
      if (this.pending.get(key) === lookup) this.pending.delete(key);
    };
    lookup.result.then(done, done);
    return lookup.result;
  }
}
