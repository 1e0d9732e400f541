/**
 * Hashes of tokens (API keys, session cookies) found missing, revoked or ended, remembered for TTL_MS so that a flood
 * of one bad token costs one lookup. Both states are final (a revoked key or an ended session never comes back, and
 * a token is only ever issued fresh: it cannot have been sent before it existed), so neither a revocation nor an
 * issue can make a miss wrong.
 * Bounded like the hits: past MAX_ENTRIES the oldest miss goes.
 */
export class TokenMisses {
  static readonly TTL_MS = 10_000;
  static readonly MAX_ENTRIES = 10_000;

  /** When to forget each miss (clock ms), oldest first. */
  private readonly until = new Map<string, number>();

  /** Whether the token was found missing less than TTL_MS before `now`; a miss past it is forgotten. */
  has(tokenHash: string, now: number): boolean {
    const until = this.until.get(tokenHash);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(tokenHash);
    return false;
  }

  /** A lookup at `now` found nothing live with this hash. */
  remember(tokenHash: string, now: number): void {
    this.until.delete(tokenHash);
    if (this.until.size >= TokenMisses.MAX_ENTRIES) this.until.delete(this.until.keys().next().value as string);
    this.until.set(tokenHash, now + TokenMisses.TTL_MS);
  }
}
