import { FakeClock } from '../../test/support/fake-clock';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { AppConfig } from '../config/app-config';
import { Sql } from '../database/sql';
import { ConfigEntry, FlagsRepository } from '../flags/flags.repository';
import { ConfigPayload } from './config-payload';
import { FlagConfigCache } from './flag-config.cache';

describe('FlagConfigCache', () => {
  let entries: ConfigEntry[];
  let reads: number;
  let failing: boolean;
  let cache: FlagConfigCache;
  let clock: FakeClock;
  const flag = (value: unknown): ConfigEntry => ({ key: 'lives', type: 'number', value, runtime: 'shared' });
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(() => {
    clock = new FakeClock(1_000_000);
    entries = [flag(3)];
    reads = 0;
    failing = false;
    const flags = {
      configEntries: async () => {
        reads += 1;
        if (failing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return entries;
      },
    } as unknown as FlagsRepository;
    const bus = { subscribe: () => undefined, onReset: () => undefined } as unknown as InvalidationBus;
    cache = new FlagConfigCache({} as Sql, flags, bus, {} as AppConfig, clock); // no Redis: payloads live 5 s
  });

  const body = (payload: ConfigPayload) => JSON.parse(payload.body.toString()).flags[0].value;

  it('serves from memory, and renews a payload in the background before it expires', async () => {
    const first = await cache.get('org');
    expect(reads).toBe(1);
    clock.set(1_000_000 + 3_000);
    expect(cache.get('org')).toBe(first); // fresh: no read
    expect(reads).toBe(1);

    entries = [flag(4)];
    clock.set(1_000_000 + 4_500);
    expect(cache.get('org')).toBe(first); // in its last fifth: answered at once, one rebuild started
    expect(cache.get('org')).toBe(first);
    expect(reads).toBe(2);
    await settle();

    clock.set(1_000_000 + 5_500); // the first payload's expiry: the renewed one is there, no wait
    const renewed = cache.get('org');
    expect(renewed).not.toBeInstanceOf(Promise);
    expect(body(renewed as ConfigPayload)).toBe(4);
    expect(reads).toBe(2);
  });

  it('rebuilds after an invalidation, and serves the last payload while the database is away', async () => {
    const first = await cache.get('org');
    failing = true;
    cache.invalidate('org');
    await expect(cache.get('org')).resolves.toBe(first);
    cache.invalidateAll();
    await expect(cache.get('other-org')).rejects.toThrow('ECONNREFUSED'); // nothing to fall back on
    failing = false;
    entries = [flag(5)];
    expect(body(await cache.get('org'))).toBe(5);
  });
});
