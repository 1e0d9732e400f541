import { FakeClock } from '../../test/support/fake-clock';
import { ApiKeyCache } from './api-key-cache';
import { ApiKeyRenewals } from './api-key-renewals';
import { Permission } from './permission';
import { Principal } from './principal';

const principal = (): Principal => ({ keyId: 'key-1', organizationId: 'org-1', permissions: new Set([Permission.FLAGS_READ]) });
const settled = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const clock = new FakeClock(Date.parse('2026-12-04T18:00:00Z'));
  const cache = new ApiKeyCache();
  const lookups: { answer(found: Principal | null): void; fail(error: unknown): void }[] = [];
  const find = jest.fn(
    () =>
      new Promise<Principal | null>((resolve, reject) => {
        lookups.push({ answer: resolve, fail: reject });
      }),
  );
  const renewals = new ApiKeyRenewals(cache, find, clock);
  const start = clock.now();
  const entry = cache.remember('hash-1', principal(), start);
  const nearEnd = start + ApiKeyCache.TTL_MS - ApiKeyRenewals.AHEAD_MS + 1;
  return { clock, cache, find, lookups, renewals, entry, start, nearEnd };
}

describe('ApiKeyRenewals', () => {
  it('renews nothing before the last REFRESH_AHEAD_MS of an entry, then one lookup however many hits', () => {
    const { clock, find, renewals, entry, start, nearEnd } = setup();
    renewals.hit(entry, start + ApiKeyCache.TTL_MS - ApiKeyRenewals.AHEAD_MS);
    expect(find).not.toHaveBeenCalled();
    clock.set(nearEnd);
    renewals.hit(entry, nearEnd);
    renewals.hit(entry, nearEnd + 1);
    expect(find).toHaveBeenCalledTimes(1);
    expect(find).toHaveBeenCalledWith('hash-1');
  });

  it('renews the entry for CACHE_TTL_MS from when the answer came, with the principal read then', async () => {
    const { clock, cache, lookups, renewals, entry, nearEnd } = setup();
    renewals.hit(entry, nearEnd);
    clock.set(nearEnd + 200);
    const reread = principal();
    lookups[0].answer(reread);
    await settled();
    expect(entry).toMatchObject({ principal: reread, expiresAt: nearEnd + 200 + ApiKeyCache.TTL_MS, refreshing: false });
    expect(cache.holds(entry)).toBe(true);
  });

  it('drops a key the renewal no longer finds', async () => {
    const { cache, lookups, renewals, entry, nearEnd } = setup();
    renewals.hit(entry, nearEnd);
    lookups[0].answer(null);
    await settled();
    expect(cache.holds(entry)).toBe(false);
    expect(cache.ofHash('hash-1', nearEnd)).toBeUndefined();
  });

  it('keeps nothing for an entry dropped or replaced while its renewal was in flight', async () => {
    const { cache, lookups, renewals, entry, nearEnd } = setup();
    renewals.hit(entry, nearEnd);
    cache.dropKey('key-1'); // revoked meanwhile
    lookups[0].answer(principal()); // read before the revocation committed
    await settled();
    expect(entry.expiresAt).toBe(0);
    expect(cache.ofHash('hash-1', nearEnd)).toBeUndefined();
  });

  it('keeps an entry REFRESH_AHEAD_MS at a time while the database is unreachable, but not past another failure', async () => {
    const { clock, cache, lookups, renewals, entry, nearEnd } = setup();
    clock.set(nearEnd);
    renewals.hit(entry, nearEnd);
    lookups[0].fail(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    await settled();
    expect(entry.expiresAt).toBe(nearEnd + ApiKeyRenewals.AHEAD_MS);
    const later = nearEnd + ApiKeyRenewals.AHEAD_MS - 1;
    clock.set(later);
    renewals.hit(entry, later); // the next hit tries again
    lookups[1].fail(new TypeError('a bug, not an outage'));
    await settled();
    expect(entry.expiresAt).toBe(nearEnd + ApiKeyRenewals.AHEAD_MS);
    expect(cache.ofHash('hash-1', nearEnd + ApiKeyRenewals.AHEAD_MS)).toBeUndefined();
  });
});
