import { ApiKeyMisses } from './api-key-misses';

describe('ApiKeyMisses', () => {
  const now = Date.parse('2026-12-04T18:00:00Z');

  it('remembers a key found missing for MISS_TTL_MS, then forgets it', () => {
    const misses = new ApiKeyMisses();
    expect(misses.has('hash-1', now)).toBe(false);
    misses.remember('hash-1', now);
    expect(misses.has('hash-1', now + ApiKeyMisses.TTL_MS - 1)).toBe(true);
    expect(misses.has('hash-2', now)).toBe(false);
    expect(misses.has('hash-1', now + ApiKeyMisses.TTL_MS)).toBe(false);
    expect(misses.has('hash-1', now)).toBe(false); // forgotten, not only expired
  });

  it('holds at most MAX_ENTRIES misses, forgetting the oldest first; a miss found again is the newest', () => {
    const misses = new ApiKeyMisses();
    for (let index = 0; index < ApiKeyMisses.MAX_ENTRIES; index += 1) misses.remember(`hash-${index}`, now);
    misses.remember('hash-0', now + 1); // found missing again: now the newest
    misses.remember('hash-new', now + 2);
    expect(misses.has('hash-0', now + 3)).toBe(true);
    expect(misses.has('hash-1', now + 3)).toBe(false);
    expect(misses.has('hash-2', now + 3)).toBe(true);
    expect(misses.has('hash-new', now + 3)).toBe(true);
  });
});
