import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { ChangeFeed, ChangeSource } from '../invalidation/change-feed';
import { loadConfig } from '../config/app-config';
import { buildConfigPayload } from '../flag-config/config-payload';
import { RateLimiter } from '../rate-limit/rate-limiter';
import { FlagConfigCache } from '../flag-config/flag-config.cache';
import { FlagConfigPoll } from '../flag-config/flag-config-poll';
import { ChangedApiKey } from './api-keys.repository';
import { Permission } from './permission';
import * as apiKey from './api-key';
import { hashApiKey } from './api-key';
import { ApiKeyIndex } from './api-key-index';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { TokenMisses } from './token-misses';
import { RequestAuthenticator } from './request-authenticator';
import { SessionAuthenticator } from './sessions/session-authenticator';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { FakeClock } from '../../test/support/fake-clock';

/** Shaped like a real key (`fsk_` and 43 base64url characters): others are refused without a lookup. */
const KEY = 'fsk_test-key-test-key-test-key-test-key-test-ke';
const OTHER = 'fsk_othr-key-othr-key-othr-key-othr-key-othr-ke';
/** Computed here, not with `hashApiKey`: the stored form of a key is the hex SHA-256 of the key. */
const KEY_SHA256 = createHash('sha256').update(KEY).digest('hex');

const live = (id: string, key = KEY): ChangedApiKey => ({
  id,
  organizationId: 'org-1',
  keyHash: createHash('sha256').update(key).digest('hex'),
  permissions: [Permission.FLAGS_READ],
  live: true,
});

/**
 * The authenticator on a fake change feed: `read(rows)` applies a read of the keys source as the feed would, and each
 * catch-up applies what `nextCatchUp` holds (nothing by default), after `catchUpGate` opens.
 */
function setup(initial: ChangedApiKey[] = [live('key-1')]) {
  const bus = new EventEmitter();
  let source!: ChangeSource<ChangedApiKey>;
  const state = { catchUps: 0, nextCatchUp: [] as ChangedApiKey[], catchUpGate: Promise.resolve() };
  const feed = {
    register: (registered: ChangeSource<ChangedApiKey>) => (source = registered),
    catchUp: async () => {
      state.catchUps += 1;
      const rows = state.nextCatchUp;
      await state.catchUpGate;
      source.apply(rows, { full: false });
    },
  } as unknown as ChangeFeed;
  const fakeBus = {
    subscribe: (topic: string, handler: (id: string) => void) => bus.on(topic, handler),
    onReset: (handler: () => void) => bus.on('reset', handler),
  } as unknown as InvalidationBus;
  const clock = new FakeClock();
  const index = new ApiKeyIndex();
  const authenticator = new ApiKeyAuthenticator(index, feed, fakeBus, clock);
  source.apply(initial, { full: true });
  return { authenticator, index, bus, clock, state, read: (rows: ChangedApiKey[], full = false) => source.apply(rows, { full }) };
}

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashApiKey(KEY)).toBe(KEY_SHA256);
    expect(KEY_SHA256).toBe('da6ae66bafa5d6e6ac759ae897b9f2599f13f857fa5ea7381b85b42ad72f8de8');
  });
});

describe('ApiKeyAuthenticator', () => {
  it('answers every live key of the full read from memory, by the SHA-256 of the key', async () => {
    const { authenticator, index, state } = setup();
    expect(index.ofHash(KEY_SHA256)).toBeDefined();
    await expect(authenticator.authenticate(`Bearer ${KEY}`)).resolves.toEqual({
      type: 'apiKey',
      id: 'key-1',
      organizationId: 'org-1',
      permissions: new Set([Permission.FLAGS_READ]),
    });
    expect(state.catchUps).toBe(0);
  });

  it('waits for a catch-up read for a key it does not hold, and serves it when the read finds it', async () => {
    const { authenticator, state } = setup([]);
    state.nextCatchUp = [live('key-1')]; // issued on another instance a moment ago
    await expect(authenticator.authenticate(`Bearer ${KEY}`)).resolves.toMatchObject({ id: 'key-1' });
    await expect(authenticator.authenticate(`Bearer ${KEY}`)).resolves.toMatchObject({ id: 'key-1' });
    expect(state.catchUps).toBe(1);
  });

  it('remembers a token that a catch-up read did not find for a while, so a flood of it costs one read', async () => {
    const { authenticator, clock, state } = setup();
    for (let attempt = 0; attempt < 20; attempt += 1) await expect(authenticator.authenticate(`Bearer ${OTHER}`)).resolves.toBeNull();
    expect(state.catchUps).toBe(1);
    clock.advance(TokenMisses.TTL_MS);
    await expect(authenticator.authenticate(`Bearer ${OTHER}`)).resolves.toBeNull();
    expect(state.catchUps).toBe(2);
  });

  it('refuses missing keys and tokens that cannot be keys without a read', async () => {
    const { authenticator, state } = setup();
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer nope', `Bearer ${KEY}x`, `Bearer sk_${KEY.slice(3)}`]) {
      await expect(authenticator.authenticate(header)).resolves.toBeNull();
      expect(authenticator.cached(header)).toBeUndefined();
    }
    expect(state.catchUps).toBe(0);
  });

  it('drops a key at once when its revocation is heard, with every header that led to it, and tells its listeners', async () => {
    const { authenticator, bus } = setup();
    const revoked: string[] = [];
    authenticator.onRevoked((keyId) => revoked.push(keyId));
    await authenticator.authenticate(`BEARER ${KEY}`);
    expect(authenticator.cached(`BEARER ${KEY}`)).toBeDefined();
    bus.emit('apiKey', 'key-1');
    expect(authenticator.cached(`BEARER ${KEY}`)).toBeUndefined();
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    await expect(authenticator.authenticate(`Bearer ${KEY}`)).resolves.toBeNull();
    expect(revoked).toEqual(['key-1']);
  });

  it('drops a key that a read shows revoked (its bus message was lost)', async () => {
    const { authenticator, read } = setup();
    const revoked: string[] = [];
    authenticator.onRevoked((keyId) => revoked.push(keyId));
    read([{ ...live('key-1'), live: false }]);
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    expect(revoked).toEqual(['key-1']);
  });

  it('does not bring back a key revoked while a read that still showed it live was in flight', async () => {
    const { authenticator, bus, read } = setup([]);
    bus.emit('apiKey', 'key-1'); // heard before the read's answer is applied
    read([live('key-1')]);
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    read([live('key-1')]); // a later read would show it revoked; a live row now is a new read's, and kept
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeDefined();
  });

  it('replaces what it holds on a full read (the database went back in time)', async () => {
    const { authenticator, read } = setup();
    read([live('key-2', OTHER)], true);
    expect(authenticator.cached(`Bearer ${KEY}`)).toBeUndefined();
    expect(authenticator.cached(`Bearer ${OTHER}`)).toMatchObject({ id: 'key-2' });
  });

  it('serves every spelling of a key from its raw header, without hashing it again', async () => {
    const { authenticator } = setup();
    await authenticator.authenticate(`Bearer ${KEY}`);
    const hashing = jest.spyOn(apiKey, 'hashApiKey');
    try {
      expect(authenticator.cached(`Bearer ${KEY}`)).toMatchObject({ id: 'key-1' });
      expect(hashing).not.toHaveBeenCalled();
      expect(authenticator.cached(`bearer  ${KEY} `)).toMatchObject({ id: 'key-1' }); // first seen: hashed once
      expect(authenticator.cached(`bearer  ${KEY} `)).toMatchObject({ id: 'key-1' });
      expect(hashing).toHaveBeenCalledTimes(1);
      expect(authenticator.cached(`Bearer ${KEY}x`)).toBeUndefined();
    } finally {
      hashing.mockRestore();
    }
  });

  it("answers a stream token's key by id, within its organization only, catching up for a key it does not hold", async () => {
    const { authenticator, state } = setup();
    await expect(authenticator.activeKey('org-1', 'key-1')).resolves.toMatchObject({ id: 'key-1' });
    await expect(authenticator.activeKey('org-2', 'key-1')).resolves.toBeNull();
    expect(state.catchUps).toBe(0);
    state.nextCatchUp = [live('key-2', OTHER)];
    await expect(authenticator.activeKey('org-1', 'key-2')).resolves.toMatchObject({ id: 'key-2' });
    expect(state.catchUps).toBe(1);
  });

  it('fails a lookup with the catch-up read that failed (the database away), and keeps serving the keys it holds', async () => {
    const { authenticator, state } = setup();
    state.catchUpGate = Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    state.catchUpGate.catch(() => undefined);
    await expect(authenticator.authenticate(`Bearer ${OTHER}`)).rejects.toThrow('ECONNREFUSED');
    await expect(authenticator.authenticate(`Bearer ${KEY}`)).resolves.toMatchObject({ id: 'key-1' });
  });

  it('refuses on the next poll a key revoked while the lean path served it from its raw header', async () => {
    const { authenticator, bus, clock } = setup();
    const limiter = { hit: () => ({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 }) } as unknown as RateLimiter;
    const payload = buildConfigPayload([], new Date(clock.now()));
    const cache = { get: () => payload } as unknown as FlagConfigCache;
    // The poll takes keys through RequestAuthenticator; no request here carries a session cookie.
    const sessions = {} as SessionAuthenticator;
    const requests = new RequestAuthenticator(authenticator, sessions, new AuthFailureLimiter(loadConfig({}), clock));
    const poll = new FlagConfigPoll(requests, limiter, cache);
    const statuses: number[] = [];
    const get = async () => {
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
      poll.handle(request, response);
      await answered;
    };
    await get();
    await get(); // served from the raw header
    bus.emit('apiKey', 'key-1');
    await get();
    expect(statuses).toEqual([200, 200, 401]);
  });
});
