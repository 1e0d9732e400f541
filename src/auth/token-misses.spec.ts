import { TokenMisses } from './token-misses';

describe('TokenMisses', () => {
  const now = Date.parse('2026-12-04T18:00:00Z');

  it('remembers a key found missing for MISS_TTL_MS, then forgets it', () => {
    const misses = new TokenMisses();
    expect(misses.has('hash-1', now)).toBe(false);
    misses.remember('hash-1', now);
    expect(misses.has('hash-1', now + TokenMisses.TTL_MS - 1)).toBe(true);
    expect(misses.has('hash-2', now)).toBe(false);
    expect(misses.has('hash-1', now + TokenMisses.TTL_MS)).toBe(false);
    expect(misses.has('hash-1', now)).toBe(false); // forgotten, not only expired
  });

  it('holds at most MAX_ENTRIES misses, forgetting the oldest first; a miss found again is the newest', () => {
    const misses = new TokenMisses();
    for (let index = 0; index < TokenMisses.MAX_ENTRIES; index += 1) misses.remember(`hash-${index}`, now);
    misses.remember('hash-0', now + 1); // found missing again: now the newest
    misses.remember('hash-new', now + 2);
    expect(misses.has('hash-0', now + 3)).toBe(true);
    expect(misses.has('hash-1', now + 3)).toBe(false);
    expect(misses.has('hash-2', now + 3)).toBe(true);
    expect(misses.has('hash-new', now + 3)).toBe(true);
  });
});
