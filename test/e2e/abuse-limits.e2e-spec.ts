import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { api } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';
import { CHANGE_FEED_READ, queriesDuring } from '../support/queries';
import { FakeClock } from '../support/fake-clock';
import { eventually } from '../support/eventually';
import { Permission } from '../../src/auth/permission';
import { ApiKeyAuthenticator } from '../../src/auth/api-key-authenticator';
import { hashApiKey } from '../../src/auth/api-key';

/** A token shaped exactly like a real key, that no organization holds. */
const madeUpKey = () => `fsk_${randomBytes(32).toString('base64url')}`;

/**
 * A flood as an attacker sends it: from another process, over `connections` keep-alive connections, `count`
 * config polls each with a different made-up key. Resolves with how many of each status came back.
 */
function flood(t: TestApp, count: number, connections: number): Promise<Record<string, number>> {
  const script = `
    const http = require('node:http');
    const { randomBytes } = require('node:crypto');
    const [port, count, connections] = process.argv.slice(1).map(Number);
    const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    const statuses = {};
    let done = 0;
    for (let i = 0; i < count; i += 1) {
      const authorization = 'Bearer fsk_' + randomBytes(32).toString('base64url');
      http.get({ host: '127.0.0.1', port, path: '/v1/flags/config', agent, headers: { authorization } }, (response) => {
        response.resume();
        response.on('end', () => {
          statuses[response.statusCode] = (statuses[response.statusCode] || 0) + 1;
          if (++done === count) { process.stdout.write(JSON.stringify(statuses)); agent.destroy(); }
        });
      }).on('error', (error) => { console.error(error.message); process.exit(1); });
    }`;
  const { port } = t.http.address() as { port: number };
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script, String(port), String(count), String(connections)], (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Record<string, number>),
    ),
  );
}

describe('abuse limits', () => {
  describe('a flood of bad keys', () => {
    let t: TestApp;
    beforeAll(async () => {
      // A clock that does not move: the change feed's periodic reads never run, so every read counted is a catch-up.
      t = await createTestApp({}, { clock: new FakeClock() });
    });
    afterAll(() => t.close());

    it('costs at most one catch-up read a second for 600 config polls over 50 connections, each with a different made-up key', async () => {
      let statuses: Record<string, number> = {};
      const started = Date.now();
      let reads = 0;
      const cost = await queriesDuring(async () => {
        reads = await queriesDuring(async () => {
          statuses = await flood(t, 600, 50);
        }, CHANGE_FEED_READ);
      });
      const seconds = (Date.now() - started) / 1000;
      // Every one is refused once the catch-up read it waited for did not find it: 401 up to AUTH_FAILURES_PER_MINUTE
      // (300), then 429.
      expect(statuses).toEqual({ 401: 300, 429: 300 });
      console.info(`600 polls with made-up keys over 50 connections in ${seconds.toFixed(1)} s cost ${reads} catch-up reads, ${cost} queries in all`);
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      expect(cost).toBe(reads);
    });

    it('costs nothing for tokens that cannot be keys, nor for a key already found missing', async () => {
      const sameKey = madeUpKey();
      const cost = await queriesDuring(async () => {
        for (const token of ['nope', 'fsk_short', `${sameKey}x`, `sk_${sameKey.slice(3)}`]) {
          await request(t.http).get('/v1/flags').set('X-Forwarded-For', '198.51.100.7').set(bearer(token)).expect(401);
        }
        await request(t.http).get('/v1/flags/config').set('X-Forwarded-For', '198.51.100.8').set(bearer(sameKey)).expect(401);
      });
      expect(cost).toBe(1); // the catch-up read sameKey waited for
      const again = await queriesDuring(async () => {
        for (let poll = 0; poll < 50; poll += 1) {
          await request(t.http).get('/v1/flags/config').set('X-Forwarded-For', '198.51.100.8').set(bearer(sameKey)).expect(401);
        }
      });
      expect(again).toBe(0);
    });
  });

  describe('failed authentications per client address', () => {
    let t: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      t = await createTestApp({ AUTH_FAILURES_PER_MINUTE: '5' });
      org = await createOrganization(t);
    });
    afterAll(() => t.close());

    it("refuses an address with 429 and Retry-After after AUTH_FAILURES_PER_MINUTE bad keys, in each surface's shape", async () => {
      // This key was used before the flood: it is cached, so the address's budget never stands in its way.
      await request(t.http).get('/v1/flags').set('X-Forwarded-For', '203.0.113.1').set(bearer(org.key)).expect(200);
      const from = (path: string) => request(t.http).get(path).set('X-Forwarded-For', '203.0.113.1');
      for (let attempt = 0; attempt < 3; attempt += 1) await from('/v1/flags').set(bearer(madeUpKey())).expect(401);
      await from('/v1/flags/config').expect(401); // no key at all counts too
      await from('/v1/storage').set(bearer('not-a-key')).expect(401);

      const held = await from('/v1/flags').set(bearer(madeUpKey()));
      expectApiError(
        held,
        429,
        'RATE_LIMITED',
        /^More than 5 requests a minute from this address had a missing or invalid API key; retry after \d+ s$/,
      );
      expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
      const poll = await from('/v1/flags/config').set(bearer(madeUpKey()));
      expectApiError(poll, 429, 'RATE_LIMITED');
      expect(poll.headers['retry-after']).toMatch(/^\d+$/);
      expectStorageError(await from('/v1/storage').set(bearer(madeUpKey())), 429, 'RATE_LIMITED');

      // The cached key still works from that address; another address is not held.
      await from('/v1/flags').set(bearer(org.key)).expect(200);
      await from('/v1/flags/config').set(bearer(org.key)).expect(200);
      await request(t.http).get('/v1/flags').set('X-Forwarded-For', '203.0.113.2').set(bearer(madeUpKey())).expect(401);
    });
  });

  describe('wrong admin tokens', () => {
    const clock = new FakeClock();
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ AUTH_FAILURES_PER_MINUTE: '5' }, { clock });
    });
    afterAll(() => t.close());

    it("spend the address's budget: 429 with Retry-After past AUTH_FAILURES_PER_MINUTE, while the right token is served from there", async () => {
      const from = (address: string) => request(t.http).post('/v1/admin/organizations').set('X-Forwarded-For', address);
      const guess = () => bearer(randomBytes(24).toString('hex'));
      for (let attempt = 0; attempt < 4; attempt += 1) {
        expectApiError(await from('203.0.113.9').set(guess()).send({ name: 'x' }), 401, 'UNAUTHORIZED', /^A valid admin token is required/);
      }
      await from('203.0.113.9').send({ name: 'x' }).expect(401); // no token at all counts too

      const held = await from('203.0.113.9').set(guess()).send({ name: 'x' });
      expectApiError(
        held,
        429,
        'RATE_LIMITED',
        /^More than 5 requests a minute from this address had a missing or invalid API key or admin token; retry after \d+ s$/,
      );
      expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(held.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Held on every admin route, and for API keys too: one budget per address.
      expectApiError(
        await request(t.http).patch(`/v1/admin/organizations/${randomUUID()}`).set('X-Forwarded-For', '203.0.113.9').set(guess()).send({}),
        429,
        'RATE_LIMITED',
      );
      expectApiError(await request(t.http).get('/v1/flags').set('X-Forwarded-For', '203.0.113.9').set(bearer(madeUpKey())), 429, 'RATE_LIMITED');

      // The right token is never refused, from that address or any other; another address is not held.
      const created = await from('203.0.113.9').set(bearer(TEST_ADMIN_TOKEN)).send({ name: 'Held address' }).expect(201);
      expect(created.body.name).toBe('Held address');
      await from('203.0.113.10').set(guess()).send({ name: 'x' }).expect(401);

      // The next window gives the address its budget back.
      clock.advance(Number(held.headers['retry-after']) * 1000);
      await from('203.0.113.9').set(guess()).send({ name: 'x' }).expect(401);
    });
  });

  describe('a valid key from an address over its budget', () => {
    let a: TestApp;
    let b: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      a = await createTestApp();
      // The instance the game servers reach: its clock does not move, so it reads keys only when a request needs it.
      b = await createTestApp({ AUTH_FAILURES_PER_MINUTE: '5' }, { sameDatabaseAs: a, clock: new FakeClock() });
      org = await createOrganization(a);
    });
    afterAll(async () => {
      await b.close();
      await a.close();
    });

    it('is served although the instance has never seen it, whichever way it was made, while bad keys from there get 429', async () => {
      const nat = (path: string) => request(b.http).get(path).set('X-Forwarded-For', '203.0.113.50');
      const before = await createApiKey(a, org.id, [Permission.FLAGS_READ]); // made before the flood, first used after it
      for (let attempt = 0; attempt < 5; attempt += 1) await nat('/v1/flags/config').set(bearer(madeUpKey())).expect(401);
      expectApiError(await nat('/v1/flags/config').set(bearer(madeUpKey())), 429, 'RATE_LIMITED');

      // Made on the other instance a moment ago; and one whose announcement was lost (written straight to the table).
      const after = await createApiKey(a, org.id, [Permission.FLAGS_READ]);
      const unannounced = madeUpKey();
      await a.db.query(`INSERT INTO api_keys (organization_id, name, key_hash, permissions) VALUES ($1, 'lost', $2, '{FLAGS_READ}')`, [
        org.id,
        hashApiKey(unannounced),
      ]);
      expect(b.app.get(ApiKeyAuthenticator).cached(`Bearer ${unannounced}`)).toBeUndefined();
      for (const key of [before.key, after.key, unannounced]) await nat('/v1/flags/config').set(bearer(key)).expect(200);

      // A revoked key is a bad key like any other.
      await admin(a).delete(`/organizations/${org.id}/api-keys/${after.id}`).expect(204);
      await eventually(async () => (await nat('/v1/flags/config').set(bearer(after.key))).status === 429, {
        timeoutMs: 1_000,
        what: 'the other instance refusing the revoked key as a bad one',
      });
    });
  });

  describe('TRUST_PROXY', () => {
    let t: TestApp;
    beforeAll(async () => {
      // Loopback is not a trusted proxy here: X-Forwarded-For from it names nobody.
      t = await createTestApp({ AUTH_FAILURES_PER_MINUTE: '2', TRUST_PROXY: '10.0.0.0/8' });
    });
    afterAll(() => t.close());

    it('counts failures under the socket address when the proxy is not trusted, whatever X-Forwarded-For says', async () => {
      for (const client of ['203.0.113.1', '203.0.113.2']) {
        await request(t.http).get('/v1/flags').set('X-Forwarded-For', client).set(bearer(madeUpKey())).expect(401);
      }
      const held = await request(t.http).get('/v1/flags').set('X-Forwarded-For', '203.0.113.3').set(bearer(madeUpKey()));
      expectApiError(held, 429, 'RATE_LIMITED');
    });
  });

  describe('the per-key budget of every API route', () => {
    let t: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      t = await createTestApp({ API_RATE_LIMIT_PER_MINUTE: '4', CONFIG_RATE_LIMIT_PER_MINUTE: '100' });
    });
    afterAll(() => t.close());
    beforeEach(async () => {
      org = await createOrganization(t);
    });

    it('answers 429 with Retry-After past API_RATE_LIMIT_PER_MINUTE, counting every route but the config poll', async () => {
      await api(t, org.key).get('/flags').expect(200);
      await api(t, org.key).get('/flags/quota').expect(200);
      await api(t, org.key).get('/flags/audit').expect(200);
      await request(t.http).get('/v1/storage').set(bearer(org.key)).expect(200);

      const refused = await api(t, org.key).get('/flags');
      expectApiError(refused, 429, 'RATE_LIMITED', /^Rate limit exceeded: at most 4 requests per minute per API key; retry after \d+ s$/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expectStorageError(await request(t.http).get('/v1/storage/items').set(bearer(org.key)), 429, 'RATE_LIMITED');
      // The config poll has its own budget, and the admin API none.
      await request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200);
      await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: 4096 }).expect(200);
    });

    it('gives each key its own budget', async () => {
      for (let call = 0; call < 4; call += 1) await api(t, org.key).get('/flags').expect(200);
      await api(t, org.key).get('/flags').expect(429);
      const other = await createOrganization(t);
      await api(t, other.key).get('/flags').expect(200);
    });
  });
});
