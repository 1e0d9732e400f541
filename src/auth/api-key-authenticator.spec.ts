import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { loadConfig } from '../config/app-config';
import { Sql } from '../database/sql';
import { buildConfigPayload } from '../flag-config/config-payload';
import { RateLimiter } from '../rate-limit/rate-limiter';
import { FlagConfigCache } from '../flag-config/flag-config.cache';
import { FlagConfigPoll } from '../flag-config/flag-config-poll';
import { ApiKeysRepository } from './api-keys.repository';
import { Permission } from './permission';
import * as apiKey from './api-key';
import { hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { FakeClock } from '../../test/support/fake-clock';

/** Shaped like a real key (`fsk_` and 43 base64url characters): others are refused without a lookup. */
const KEY = 'fsk_test-key-test-key-test-key-test-key-test-ke';
/** Computed here, not with `hashApiKey`: the stored form of a key is the hex SHA-256 of the key. */
const KEY_SHA256 = createHash('sha256').update(KEY).digest('hex');

type ApiKeyRow = Awaited<ReturnType<ApiKeysRepository['findActiveApiKeysByHashes']>>[number] | null;

/** Lookups go to the database in batches: at the end of the turn, or BATCH_WINDOW_MS later while one is in flight. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, ApiKeyAuthenticator.BATCH_WINDOW_MS + 5));
/** Long enough for a release() (itself deferred by nextTurn) to have been answered. */
const settled = () => new Promise<void>((resolve) => setTimeout(resolve, 2 * (ApiKeyAuthenticator.BATCH_WINDOW_MS + 5)));

function setup() {
  const bus = new EventEmitter();
  let release: (row: ApiKeyRow) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const lookups: string[] = [];
  let queries = 0;
  const repository = {
    findActiveApiKeysByHashes: (_db: Sql, keyHashes: string[]) => {
      queries += 1;
      lookups.push(...keyHashes);
      return new Promise<NonNullable<ApiKeyRow>[]>((resolve, reject) => {
        release = (row) => resolve(row ? [row] : []);
        fail = reject;
      });
    },
  } as unknown as ApiKeysRepository;
  const fakeBus = {
    subscribe: (topic: string, handler: (id: string) => void) => bus.on(topic, handler),
    onReset: (handler: () => void) => bus.on('reset', handler),
  } as unknown as InvalidationBus;
  const clock = new FakeClock();
  const authenticator = new ApiKeyAuthenticator({} as Sql, repository, fakeBus, clock);
  const row = { id: 'key-1', organizationId: 'org-1', keyHash: KEY_SHA256, permissions: [Permission.FLAGS_READ] } as NonNullable<ApiKeyRow>;
  return {
    authenticator,
    bus,
    clock,
    lookups,
    get queries() {
      return queries;
    },
    row,
    // The batch query starts at the end of this turn: answer it then.
    release: (value: ApiKeyRow) => void nextTurn().then(() => release(value)),
    fail: (error: unknown) => void nextTurn().then(() => fail(error)),
  };
}

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashApiKey(KEY)).toBe(KEY_SHA256);
    expect(KEY_SHA256).toBe('da6ae66bafa5d6e6ac759ae897b9f2599f13f857fa5ea7381b85b42ad72f8de8');
  });
});

describe('ApiKeyAuthenticator', () => {
  it('looks a key up by the SHA-256 of the key, never by the key itself', async () => {
    const { authenticator, lookups, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    expect(await pending).toMatchObject({ keyId: 'key-1', organizationId: 'org-1' });
    expect(lookups).toEqual([KEY_SHA256]);
  });

  it('refuses a row whose stored hash is not the hash of the key presented', async () => {
    const { authenticator, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release({ ...row, keyHash: createHash('sha256').update('fsk_another-key').digest('hex') });
    expect(await pending).toBeNull();
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('caches a found key, so the next request needs no lookup', async () => {
    const { authenticator, lookups, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    expect(await pending).toMatchObject({ keyId: 'key-1', organizationId: 'org-1' });
    expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
    await authenticator.authenticate(`Bearer ${KEY}`);
    expect(lookups).toHaveLength(1);
  });

  it('drops a key at once when its revocation is heard', async () => {
    const { authenticator, bus, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await pending;
    bus.emit('apiKey', 'key-1');
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('does not cache a key whose revocation arrived while it was being looked up', async () => {
    const { authenticator, bus, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    bus.emit('apiKey', 'key-1'); // revoked and committed after the lookup read the row
    release(row);
    await pending;
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('refuses missing and malformed keys, and tokens that cannot be keys, without a lookup', async () => {
    const { authenticator, lookups } = setup();
    for (const header of [
      undefined,
      'Basic abc',
      'Bearer fsk_unknown',
      `Bearer ${KEY}x`,
      `Bearer sk_${KEY.slice(3)}`,
      `Bearer ${KEY.replace('-', '.')}`,
    ]) {
      expect(await authenticator.authenticate(header)).toBeNull();
      expect(authenticator.cached(header)).toBeUndefined();
    }
    await nextTurn();
    expect(lookups).toEqual([]);
  });

  it('remembers an unknown key as a miss for a while, so a flood of it costs one lookup', async () => {
    const { authenticator, clock, lookups, release } = setup();
    const unknown = `Bearer fsk_${'u'.repeat(43)}`;
    const first = authenticator.authenticate(unknown);
    release(null);
    expect(await first).toBeNull();
    for (let attempt = 0; attempt < 100; attempt += 1) expect(await authenticator.authenticate(unknown)).toBeNull();
    await nextTurn();
    expect(lookups).toHaveLength(1);

    clock.advance(ApiKeyAuthenticator.MISS_TTL_MS + 1);
    const later = authenticator.authenticate(unknown);
    await nextTurn();
    expect(lookups).toHaveLength(2);
    release(null);
    expect(await later).toBeNull();
  });

  it('looks up the keys that arrive together with one query', async () => {
    const context = setup();
    const { authenticator, lookups, row, release } = context;
    const keys = ['a', 'b', 'c'].map((letter) => `fsk_${letter.repeat(43)}`);
    const answers = Promise.all([...keys, KEY].map((key) => authenticator.authenticate(`Bearer ${key}`)));
    release(row);
    expect(await answers).toEqual([null, null, null, expect.objectContaining({ keyId: 'key-1' })]);
    expect(context.queries).toBe(1);
    expect(lookups).toHaveLength(4);
  });

  it('serves every spelling of a cached key from its raw header, without hashing it again', async () => {
    const { authenticator, lookups, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await pending;
    const hashing = jest.spyOn(apiKey, 'hashApiKey');
    try {
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(hashing).not.toHaveBeenCalled();
      expect(authenticator.cached(`bearer  ${KEY} `)).toMatchObject({ keyId: 'key-1' }); // first seen: hashed once
      expect(authenticator.cached(`bearer  ${KEY} `)).toMatchObject({ keyId: 'key-1' });
      expect(hashing).toHaveBeenCalledTimes(1);
      expect(authenticator.cached(`Bearer ${KEY}x`)).toBeUndefined();
    } finally {
      hashing.mockRestore();
    }
    expect(lookups).toHaveLength(1);
  });

  it('drops every raw header of a key with its revocation, and after expiry', async () => {
    const { authenticator, bus, clock, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await pending;
    expect(authenticator.cached(`BEARER ${KEY}`)).toBeDefined();
    bus.emit('apiKey', 'key-1');
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    expect(authenticator.cached(`BEARER ${KEY}`)).toBeUndefined();

    const again = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await again;
    clock.advance(ApiKeyAuthenticator.CACHE_TTL_MS + 1);
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('shares one lookup among concurrent misses of a key, but starts another after a revocation', async () => {
    const { authenticator, bus, lookups, release } = setup();
    const first = authenticator.authenticate(`Bearer ${KEY}`);
    const second = authenticator.authenticate(`bearer ${KEY}`);
    await nextTurn();
    expect(lookups).toHaveLength(1);
    bus.emit('apiKey', 'key-1');
    const afterRevocation = authenticator.authenticate(`Bearer ${KEY}`);
    await nextTurn();
    expect(lookups).toHaveLength(2);
    release(null); // the second lookup, started after the revocation, finds no active key
    expect(await afterRevocation).toBeNull();
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    void first;
    void second;
  });

  describe('near the end of an entry', () => {
    const inUse = async () => {
      const context = setup();
      const pending = context.authenticator.authenticate(`Bearer ${KEY}`);
      context.release(context.row);
      await pending;
      const start = context.clock.now();
      context.clock.set(start + ApiKeyAuthenticator.CACHE_TTL_MS - 1_000);
      return { ...context, start };
    };

    it('keeps serving a key in use and renews it with one background lookup', async () => {
      const { authenticator, lookups, row, release, start, clock } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      await nextTurn();
      expect(lookups).toEqual([KEY_SHA256, KEY_SHA256]);
      release(row);
      await nextTurn();
      await nextTurn();
      clock.set(start + ApiKeyAuthenticator.CACHE_TTL_MS + 1_000);
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(lookups).toHaveLength(2);
    });

    it('drops a key that the renewal no longer finds', async () => {
      const { authenticator, release } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      release(null);
      await settled();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    });

    it('keeps a key in use while the database is unreachable, but not past another kind of failure', async () => {
      const { authenticator, fail, start, clock } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      fail(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      await settled();
      clock.set(start + ApiKeyAuthenticator.CACHE_TTL_MS + 1_000); // past its first life
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      fail(new TypeError('a bug, not an outage')); // the renewal that last hit started
      await settled();
      clock.set(start + ApiKeyAuthenticator.CACHE_TTL_MS + ApiKeyAuthenticator.REFRESH_AHEAD_MS);
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    });

    it('does not renew a key revoked while the renewal was in flight', async () => {
      const { authenticator, bus, row, release } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      bus.emit('apiKey', 'key-1');
      release(row); // read before the revocation committed
      await settled();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    });
  });

  it('forgets every key when the bus says it may have missed revocations', async () => {
    const { authenticator, bus, row, release } = setup();
    const pending = authenticator.authenticate(`Bearer ${KEY}`);
    release(row);
    await pending;
    bus.emit('reset');
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
  });

  it('refuses on the next poll a key revoked while the lean path served it from its raw header', async () => {
    const { authenticator, bus, clock, lookups, row, release } = setup();
    const limiter = { hit: () => ({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 }) } as unknown as RateLimiter;
    const payload = buildConfigPayload([], new Date(clock.now()));
    const cache = { get: () => payload } as unknown as FlagConfigCache;
    const config = loadConfig({});
    const poll = new FlagConfigPoll(authenticator, new AuthFailureLimiter(config, clock), limiter, cache);
    const statuses: number[] = [];
    // What the database answers when the poll misses the cache: the row, until the key is revoked.
    const get = async (stored: typeof row | null = row) => {
      const request = {
        method: 'GET',
        url: '/v1/flags/config',
        headers: { authorization: `Bearer ${KEY}` },
        socket: { remoteAddress: '192.0.2.1' },
      } as unknown as IncomingMessage;
      let done: () => void = () => undefined;
      const answered = new Promise<void>((resolve) => (done = resolve));
      const response = {
        headersSent: false,
        destroyed: false,
        setHeader: () => undefined,
        writeHead: (status: number) => statuses.push(status),
        end: () => done(),
      } as unknown as ServerResponse;
      const lookupsBefore = lookups.length;
      poll.handle(request, response);
      await nextTurn();
      if (lookups.length > lookupsBefore) release(stored); // the first poll, or one after a revocation
      await answered;
    };
    await get();
    await get(); // served from the raw header
    expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
    bus.emit('apiKey', 'key-1');
    await get(null);
    expect(statuses).toEqual([200, 200, 401]);
    expect(lookups).toHaveLength(2);
  });
});
