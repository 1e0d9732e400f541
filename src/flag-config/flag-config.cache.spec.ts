import { FakeClock } from '../../test/support/fake-clock';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { ChangeFeed, ChangeSource } from '../invalidation/change-feed';
import { Sql } from '../database/sql';
import { ConfigEntry, FlagsRepository } from '../flags/flags.repository';
import { ConfigPayload } from './config-payload';
import { FlagConfigCache } from './flag-config.cache';

describe('FlagConfigCache', () => {
  let entries: ConfigEntry[];
  let version: number;
  let reads: number;
  let failing: boolean;
  let cache: FlagConfigCache;
  let clock: FakeClock;
  let source: ChangeSource<{ organizationId: string; version: number }>;
  let busHandler: (organizationId: string) => void;
  let heard: Array<string | null>;
  const flag = (value: unknown): ConfigEntry => ({ key: 'lives', type: 'number', value, runtime: 'shared' });
  /** A committed change: the flags and the version move together, as in one transaction. */
  const change = (value: unknown) => {
    entries = [flag(value)];
    version += 1;
  };

  beforeEach(() => {
    clock = new FakeClock(1_000_000);
    entries = [flag(3)];
    version = 1;
    reads = 0;
    failing = false;
    heard = [];
    const flags = {
      versionedConfig: async () => {
        reads += 1;
        if (failing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return { version, entries };
      },
    } as unknown as FlagsRepository;
    const bus = { subscribe: (_topic: string, handler: (id: string) => void) => (busHandler = handler) } as unknown as InvalidationBus;
    const feed = { register: (registered: typeof source) => (source = registered) } as unknown as ChangeFeed;
    cache = new FlagConfigCache({} as Sql, flags, bus, feed, clock);
    cache.onInvalidate((organizationId) => heard.push(organizationId));
  });

  const valueOf = (payload: ConfigPayload | Promise<ConfigPayload>) => JSON.parse((payload as ConfigPayload).body.toString()).flags[0].value;

  it('serves a payload from memory until a change is heard of, however long that is', async () => {
    const first = await cache.get('org');
    clock.advance(24 * 60 * 60 * 1000);
    expect(cache.get('org')).toBe(first);
    expect(reads).toBe(1);
  });

  it('rebuilds on the next poll after the bus tells of a change', async () => {
    await cache.get('org');
    change(4);
    busHandler('org');
    expect(valueOf(await cache.get('org'))).toBe(4);
    expect(reads).toBe(2);
    expect(heard).toEqual(['org']);
  });

  it('rebuilds after a change read by the change feed (its bus message lost), once, however often the row is read again', async () => {
    await cache.get('org');
    change(4);
    source.apply([{ organizationId: 'org', version }], { full: false });
    expect(valueOf(await cache.get('org'))).toBe(4);
    // An old transaction holds the feed's xmin back: the same row comes again, and changes nothing.
    source.apply([{ organizationId: 'org', version }], { full: false });
    source.apply([{ organizationId: 'org', version: version - 1 }], { full: false });
    expect(valueOf(cache.get('org'))).toBe(4);
    expect(reads).toBe(2);
    expect(heard).toEqual(['org']);
  });

  it('does not keep as fresh a build that read a version older than one the feed has seen', async () => {
    await cache.get('org');
    busHandler('org');
    const build = cache.get('org'); // reads version 1 ...
    source.apply([{ organizationId: 'org', version: 2 }], { full: false }); // ... while the feed has seen version 2
    expect(valueOf(await build)).toBe(3);
    change(5);
    expect(valueOf(await cache.get('org'))).toBe(5);
  });

  it('tells its listeners of changed organizations it holds nothing for (their streams)', () => {
    source.apply([{ organizationId: 'elsewhere', version: 7 }], { full: false });
    expect(heard).toEqual(['elsewhere']);
  });

  it('drops everything on a full read, and serves the last payload while the database is away', async () => {
    const first = await cache.get('org');
    failing = true;
    source.apply([], { full: true });
    expect(heard).toEqual([null]);
    await expect(cache.get('org')).resolves.toBe(first);
    await expect(cache.get('other-org')).rejects.toThrow('ECONNREFUSED'); // nothing to fall back on
    failing = false;
    change(5);
    expect(valueOf(await cache.get('org'))).toBe(5);
  });

  it('keeps its bytes under MAX_BYTES by dropping the payloads polled least recently', async () => {
    const max = 100_000;
    cache.maxBytes = max;
    // Payloads of about max/9 bytes each, counted twice (bytes and parsed flags): 4 fit, not 5.
    entries = [{ key: 'big', type: 'string', value: 'x'.repeat(max / 9), runtime: 'shared' }];
    for (const organization of ['a', 'b', 'c', 'd']) await cache.get(organization);
    expect(cache.footprint.organizations).toBe(4);
    cache.get('a'); // polled again: it gets a second chance
    await cache.get('e');
    expect(cache.footprint.bytes).toBeLessThanOrEqual(max);
    const before = reads;
    cache.get('a');
    expect(reads).toBe(before); // still cached
    await cache.get('b'); // the least recently polled went first
    expect(reads).toBe(before + 1);
  });
});
