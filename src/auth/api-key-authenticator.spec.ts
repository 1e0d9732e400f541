import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidationBus } from '../common/invalidation-bus';
import { loadConfig } from '../config/app-config';
import { buildConfigPayload } from '../flag-config/config-payload';
import { ConfigRateLimiter } from '../flag-config/config-rate-limiter';
import { FlagConfigCache } from '../flag-config/flag-config.cache';
import { FlagConfigPoll } from '../flag-config/flag-config-poll';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { Permission } from '../organizations/permission';
import * as apiKey from './api-key';
import { hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';

const KEY = 'fsk_test-key';
/** Computed here, not with `hashApiKey`: the stored form of a key is the hex SHA-256 of the key. */
const KEY_SHA256 = createHash('sha256').update(KEY).digest('hex');

type ApiKeyRow = Awaited<ReturnType<OrganizationsRepository['findActiveApiKeyByHash']>>;

function setup() {
  const bus = new EventEmitter();
  let release: (row: ApiKeyRow) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const lookups: string[] = [];
  const repository = {
    findActiveApiKeyByHash: (keyHash: string) => {
      lookups.push(keyHash);
      return new Promise<ApiKeyRow>((resolve, reject) => {
        release = resolve;
        fail = reject;
      });
    },
  } as unknown as OrganizationsRepository;
  const fakeBus = {
    subscribe: (topic: string, handler: (id: string) => void) => bus.on(topic, handler),
    onReset: (handler: () => void) => bus.on('reset', handler),
  } as unknown as InvalidationBus;
  const authenticator = new ApiKeyAuthenticator(repository, fakeBus);
  const row = { id: 'key-1', organizationId: 'org-1', keyHash: KEY_SHA256, permissions: [Permission.FLAGS_READ] } as NonNullable<ApiKeyRow>;
  return { authenticator, bus, lookups, row, release: (value: ApiKeyRow) => release(value), fail: (error: unknown) => fail(error) };
}

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashApiKey(KEY)).toBe(KEY_SHA256);
    expect(KEY_SHA256).toBe('453fea9b1fcae80fa406e84c804aa629be35830298d85f9c3e5576dd49d38ebc');
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

  it('refuses missing, malformed and unknown keys', async () => {
    const { authenticator, release } = setup();
    expect(await authenticator.authenticate(undefined)).toBeNull();
    expect(await authenticator.authenticate('Basic abc')).toBeNull();
    const pending = authenticator.authenticate('Bearer fsk_unknown');
    release(null);
    expect(await pending).toBeNull();
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
    const { authenticator, bus, row, release } = setup();
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
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now + ApiKeyAuthenticator.CACHE_TTL_MS + 1);
    try {
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });

  it('shares one lookup among concurrent misses of a key, but starts another after a revocation', async () => {
    const { authenticator, bus, lookups, row, release } = setup();
    const first = authenticator.authenticate(`Bearer ${KEY}`);
    const second = authenticator.authenticate(`bearer ${KEY}`);
    expect(lookups).toHaveLength(1);
    bus.emit('apiKey', 'key-1');
    const afterRevocation = authenticator.authenticate(`Bearer ${KEY}`);
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
      const start = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(start + ApiKeyAuthenticator.CACHE_TTL_MS - 1_000);
      return { ...context, start, clock };
    };
    afterEach(() => jest.restoreAllMocks());

    it('keeps serving a key in use and renews it with one background lookup', async () => {
      const { authenticator, lookups, row, release, start, clock } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(lookups).toEqual([KEY_SHA256, KEY_SHA256]);
      release(row);
      await new Promise(setImmediate);
      clock.mockReturnValue(start + ApiKeyAuthenticator.CACHE_TTL_MS + 1_000);
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      expect(lookups).toHaveLength(2);
    });

    it('drops a key that the renewal no longer finds', async () => {
      const { authenticator, release } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      release(null);
      await new Promise(setImmediate);
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    });

    it('keeps a key in use while the database is unreachable, but not past another kind of failure', async () => {
      const { authenticator, fail, start, clock } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      fail(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      await new Promise(setImmediate);
      clock.mockReturnValue(start + ApiKeyAuthenticator.CACHE_TTL_MS + 1_000); // past its first life
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
      fail(new TypeError('a bug, not an outage')); // the renewal that last hit started
      await new Promise(setImmediate);
      clock.mockReturnValue(start + ApiKeyAuthenticator.CACHE_TTL_MS + ApiKeyAuthenticator.REFRESH_AHEAD_MS);
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    });

    it('does not renew a key revoked while the renewal was in flight', async () => {
      const { authenticator, bus, row, release } = await inUse();
      expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
      bus.emit('apiKey', 'key-1');
      release(row); // read before the revocation committed
      await new Promise(setImmediate);
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
    const { authenticator, bus, lookups, row, release } = setup();
    const limiter = { hit: () => ({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 }) } as unknown as ConfigRateLimiter;
    const payload = buildConfigPayload([]);
    const cache = { get: () => payload } as unknown as FlagConfigCache;
    const poll = new FlagConfigPoll(authenticator, limiter, cache, loadConfig({}));
    const statuses: number[] = [];
    // What the database answers when the poll misses the cache: the row, until the key is revoked.
    const get = (stored: typeof row | null = row) =>
      new Promise<void>((done) => {
        const request = { method: 'GET', url: '/v1/flags/config', headers: { authorization: `Bearer ${KEY}` } } as unknown as IncomingMessage;
        const response = {
          headersSent: false,
          destroyed: false,
          setHeader: () => undefined,
          writeHead: (status: number) => statuses.push(status),
          end: () => done(),
        } as unknown as ServerResponse;
        const lookupsBefore = lookups.length;
        poll.handle(request, response);
        if (lookups.length > lookupsBefore) release(stored); // the first poll, or one after a revocation
      });
    await get();
    await get(); // served from the raw header
    expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ keyId: 'key-1' });
    bus.emit('apiKey', 'key-1');
    await get(null);
    expect(statuses).toEqual([200, 200, 401]);
    expect(lookups).toHaveLength(2);
  });
});
