import { Permission } from './permission';
import { ApiKeyCache } from './api-key-cache';
import { Principal } from './principal';

const principal = (keyId: string): Principal => ({ keyId, organizationId: 'org-1', permissions: new Set([Permission.FLAGS_READ]) });
const hash = (index: number) => `hash-${index}`;
const header = (index: number) => `Bearer key-${index}`;

describe('ApiKeyCache', () => {
  const now = Date.parse('2026-12-04T18:00:00Z');
  let cache: ApiKeyCache;
  beforeEach(() => {
    cache = new ApiKeyCache();
  });

  it('answers a remembered key by its hash for CACHE_TTL_MS, and by a raw header only once that is mapped to it', () => {
    const entry = cache.remember(hash(1), principal('key-1'), now);
    expect(cache.ofHash(hash(1), now)).toBe(entry);
    expect(cache.ofHeader(header(1), now)).toBeUndefined();
    cache.rememberHeader(header(1), entry);
    expect(cache.ofHeader(header(1), now + ApiKeyCache.TTL_MS - 1)).toBe(entry);
    expect(cache.ofHash(hash(1), now + ApiKeyCache.TTL_MS)).toBeUndefined();
    expect(cache.ofHeader(header(1), now + ApiKeyCache.TTL_MS)).toBeUndefined();
  });

  it('renews an entry for CACHE_TTL_MS from the renewal, with the principal read then', () => {
    const entry = cache.remember(hash(1), principal('key-1'), now);
    const reread = principal('key-1');
    cache.renew(entry, reread, now + 20_000);
    expect(cache.ofHash(hash(1), now + 20_000 + ApiKeyCache.TTL_MS - 1)).toMatchObject({ principal: reread });
  });

  it('drops a key by its id with every header that led to it, and a reference still held stops answering', () => {
    const entry = cache.remember(hash(1), principal('key-1'), now);
    cache.rememberHeader(header(1), entry);
    cache.rememberHeader(`bearer  ${header(1).slice(7)}`, entry);
    cache.dropKey('key-1');
    expect(entry.expiresAt).toBe(0);
    expect(cache.holds(entry)).toBe(false);
    expect(cache.ofHash(hash(1), now)).toBeUndefined();
    expect(cache.ofHeader(header(1), now)).toBeUndefined();
    expect(cache.ofHeader(`bearer  ${header(1).slice(7)}`, now)).toBeUndefined();
    cache.dropKey('key-unknown'); // nothing cached under it: nothing happens
  });

  it('replaces the entry of a key found again: the old one stops answering', () => {
    const old = cache.remember(hash(1), principal('key-1'), now);
    cache.rememberHeader(header(1), old);
    const fresh = cache.remember(hash(1), principal('key-1'), now + 1_000);
    expect(old.expiresAt).toBe(0);
    expect(cache.holds(old)).toBe(false);
    expect(cache.holds(fresh)).toBe(true);
    expect(cache.ofHeader(header(1), now)).toBeUndefined();
  });

  it('forgets every key at once', () => {
    for (let index = 0; index < 3; index += 1) cache.rememberHeader(header(index), cache.remember(hash(index), principal(`key-${index}`), now));
    cache.dropAll();
    for (let index = 0; index < 3; index += 1) {
      expect(cache.ofHash(hash(index), now)).toBeUndefined();
      expect(cache.ofHeader(header(index), now)).toBeUndefined();
    }
  });

  it('keeps the first MAX_HEADERS_PER_ENTRY spellings of a key, and no header longer than MAX_HEADER_LENGTH', () => {
    const entry = cache.remember(hash(1), principal('key-1'), now);
    const spellings = Array.from({ length: ApiKeyCache.MAX_HEADERS_PER_ENTRY + 1 }, (_, index) => `Bearer${' '.repeat(index + 1)}key-1`);
    for (const spelling of spellings) cache.rememberHeader(spelling, entry);
    const kept = spellings.map((spelling) => cache.ofHeader(spelling, now) === entry);
    expect(kept).toEqual([...Array(ApiKeyCache.MAX_HEADERS_PER_ENTRY).fill(true), false]);
    const long = `Bearer ${'k'.repeat(ApiKeyCache.MAX_HEADER_LENGTH)}`;
    const other = cache.remember(hash(2), principal('key-2'), now);
    cache.rememberHeader(long, other);
    expect(cache.ofHeader(long, now)).toBeUndefined();
    expect(other.headers).toEqual([]);
  });

  it('holds at most MAX_ENTRIES keys, dropping the oldest with its headers', () => {
    const first = cache.remember(hash(0), principal('key-0'), now);
    cache.rememberHeader(header(0), first);
    for (let index = 1; index < ApiKeyCache.MAX_ENTRIES; index += 1) cache.remember(hash(index), principal(`key-${index}`), now);
    expect(cache.ofHash(hash(0), now)).toBe(first);
    cache.remember(hash(ApiKeyCache.MAX_ENTRIES), principal('key-new'), now);
    expect(cache.ofHash(hash(0), now)).toBeUndefined();
    expect(cache.ofHeader(header(0), now)).toBeUndefined();
    expect(cache.ofHash(hash(1), now)).toBeDefined();
  });

  it('holds at most MAX_ENTRIES headers, dropping the oldest header first (its key stays)', () => {
    const perEntry = ApiKeyCache.MAX_HEADERS_PER_ENTRY;
    const entries = Array.from({ length: ApiKeyCache.MAX_ENTRIES / perEntry + 1 }, (_, index) =>
      cache.remember(hash(index), principal(`key-${index}`), now),
    );
    const spelling = (entry: number, variant: number) => `Bearer${' '.repeat(variant + 1)}key-${entry}`;
    for (let index = 0; index < ApiKeyCache.MAX_ENTRIES / perEntry; index += 1) {
      for (let variant = 0; variant < perEntry; variant += 1) cache.rememberHeader(spelling(index, variant), entries[index]);
    }
    const last = entries.length - 1;
    cache.rememberHeader(spelling(last, 0), entries[last]);
    expect(cache.ofHeader(spelling(0, 0), now)).toBeUndefined();
    expect(entries[0].headers).toEqual(Array.from({ length: perEntry - 1 }, (_, variant) => spelling(0, variant + 1)));
    expect(cache.ofHeader(spelling(0, 1), now)).toBe(entries[0]);
    expect(cache.ofHeader(spelling(last, 0), now)).toBe(entries[last]);
    expect(cache.ofHash(hash(0), now)).toBe(entries[0]);
  });
});
