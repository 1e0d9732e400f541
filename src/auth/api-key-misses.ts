/**
 * Key hashes found missing or revoked, remembered for MISS_TTL_MS so that a flood of one bad key costs one
 * lookup. Both states are final (a revoked key is never restored, and a key is only ever issued fresh: its token
 * cannot have been sent before it existed), so neither a revocation nor a creation can make a miss wrong.
 * Bounded like the hits: past MAX_ENTRIES the oldest miss goes.
 */
export class ApiKeyMisses {
  static readonly TTL_MS = 10_000;
  static readonly MAX_ENTRIES = 10_000;

  /** When to forget each miss (clock ms), oldest first. */
  private readonly until = new Map<string, number>();

  /** Whether the key was found missing less than MISS_TTL_MS before `now`; a miss past it is forgotten. */
  has(keyHash: string, now: number): boolean {
    const until = this.until.get(keyHash);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(keyHash);
    return false;
  }

  /** A lookup at `now` found no active key with this hash. */
  remember(keyHash: string, now: number): void {
    this.until.delete(keyHash);
    if (this.until.size >= ApiKeyMisses.MAX_ENTRIES) this.until.delete(this.until.keys().next().value as string);
    this.until.set(keyHash, now + ApiKeyMisses.TTL_MS);
  }
}
