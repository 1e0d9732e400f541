import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlagstoreClient, FlagstoreClientOptions, FlagstoreError } from '../src';
import { collectErrors } from './support/client-harness';
import { ManualScheduler } from './support/manual-scheduler';
import { RecordingFetch } from './support/recording-fetch';
import {
  call,
  createFlag,
  createKey,
  createOrganization,
  eventually,
  revokeKey,
  setFlagValue,
  sleep,
  unique,
  useScenarioTarget,
} from './support/scenario-target';

/*
 * The scenarios every game-server SDK runs against a real service (test/fixtures/sdk/SCENARIOS.md, numbered as there;
 * scenario 2, the 429, is scenario-rate-limit.spec.ts). Runs inside `npm test` against the app in-process, and
 * alone against FLAGSTORE_URL / FLAGSTORE_KEY: `npm run test:sdk-scenarios`.
 */

describe(`SDK scenarios against a real service`, () => {
  const target = useScenarioTarget();
  const open: FlagstoreClient[] = [];
  const folders: string[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  function connect(options: Partial<FlagstoreClientOptions> = {}) {
    const recorder = new RecordingFetch();
    const client = new FlagstoreClient({ baseUrl: target.baseUrl, apiKey: target.key, fetch: recorder.fetch, ...options });
    open.push(client);
    return { client, recorder, errors: collectErrors(client) };
  }
  const configRequests = (recorder: RecordingFetch) => recorder.requests.filter((request) => request.path.endsWith('/flags/config'));

  it('1. ready: the first poll is answered 200, the next one 304 to If-None-Match', async () => {
    const key = unique('sdk-ts-ready');
    await createFlag(target.baseUrl, target.key, { key, type: 'boolean', value: true, runtime: 'shared' });
    const scheduler = new ManualScheduler();
    const { client, recorder } = connect({ scheduler, random: () => 0.5 });
    const changes = jest.fn();
    client.on('change', changes);
    await client.ready();

    expect(client.getBoolean(key, false)).toBe(true);
    expect(recorder.requests).toHaveLength(1);
    expect(recorder.requests[0].status).toBe(200);
    expect(recorder.requests[0].headers).not.toHaveProperty('if-none-match');
    expect(scheduler.pending()).toEqual([20_000]);

    const next = scheduler.nextTimer();
    scheduler.runNext();
    await next;
    expect(recorder.requests).toHaveLength(2);
    expect(recorder.requests[1].status).toBe(304);
    expect(recorder.requests[1].headers['if-none-match']).toMatch(/^W\/".+"$/);
    expect(client.getBoolean(key, false)).toBe(true);
    expect(changes).not.toHaveBeenCalled();
  });

  describe('3. a key revoked and replaced', () => {
    it('a revoked key: the client reports 401 and stops, serving what it had; a client with a new key is ready', async () => {
      if (target.adminToken === undefined) {
        console.warn('FLAGSTORE_ADMIN_TOKEN is not set: the revocation part of scenario 3 needs it (the unknown key part runs)');
        return;
      }
      const organization = await createOrganization(target.baseUrl, target.adminToken, unique('sdk-ts-revoke'));
      const key = unique('sdk-ts-revoke');
      await createFlag(target.baseUrl, organization.writeKey, { key, type: 'string', value: 'before', runtime: 'shared' });
      const first = await createKey(target.baseUrl, target.adminToken, organization.id, ['FLAGS_READ']);
      const { client, recorder, errors } = connect({ apiKey: first.key, stream: true });
      await client.ready();
      expect(client.getString(key, '')).toBe('before');
      // The stream is open before the key is revoked: revoking closes it, and the reconnect meets the 401.
      expect(await eventually(() => recorder.requests.some((request) => request.path.endsWith('/stream') && request.status === 200), 5_000)).toBe(
        true,
      );

      await revokeKey(target.baseUrl, target.adminToken, organization.id, first.id);
      // The service answers a revoked key exactly as a key it never issued: the client cannot, and need not, tell them apart.
      const revokedAnswer = await call(target.baseUrl, first.key, 'GET', '/flags/config');
      const unknownAnswer = await call(target.baseUrl, `fsk_${'A'.repeat(43)}`, 'GET', '/flags/config');
      expect(revokedAnswer.status).toBe(401);
      expect([revokedAnswer.status, revokedAnswer.body]).toEqual([unknownAnswer.status, unknownAnswer.body]);
      expect(await eventually(() => errors.some((error) => error.kind === 'unauthorized'), 15_000)).toBe(true);
      expect(errors.find((error) => error.kind === 'unauthorized')).toMatchObject({ status: 401 });
      const sent = recorder.requests.length;
      await sleep(3_000);
      expect(recorder.requests).toHaveLength(sent);
      expect(client.getString(key, '')).toBe('before');

      const second = await createKey(target.baseUrl, target.adminToken, organization.id, ['FLAGS_READ']);
      const replaced = connect({ apiKey: second.key });
      await replaced.client.ready();
      expect(replaced.client.getString(key, '')).toBe('before');
    });

    it('a key without FLAGS_READ: the client reports 403 and stops', async () => {
      if (target.adminToken === undefined) return;
      const organization = await createOrganization(target.baseUrl, target.adminToken, unique('sdk-ts-forbidden'));
      const storageOnly = await createKey(target.baseUrl, target.adminToken, organization.id, ['STORAGE_READ']);
      const { client, recorder } = connect({ apiKey: storageOnly.key });

      await expect(client.ready()).rejects.toMatchObject({ kind: 'forbidden', status: 403 });
      await sleep(1_500);
      expect(recorder.requests).toHaveLength(1);
    });

    it('an unknown key (answered exactly as a revoked one): not ready, 401 reported, one request and no more', async () => {
      const { client, recorder, errors } = connect({ apiKey: `fsk_${'A'.repeat(43)}` });

      const refusal = await client.ready().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(FlagstoreError);
      expect(refusal).toMatchObject({ kind: 'unauthorized', status: 401 });
      expect(errors.map((error) => error.kind)).toEqual(['unauthorized']);
      await sleep(3_000);
      expect(recorder.requests).toHaveLength(1);
    });
  });

  it('4. a cache file: a client started while the service is down serves the last good payload from it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sdk-scenario-cache-'));
    folders.push(folder);
    const cacheFile = join(folder, 'flags.json');
    const text = unique('sdk-ts-cache');
    const loot = unique('sdk-ts-cache');
    const lootValue = { tiers: { rare: [1, 2, { boss: null }] }, name: 'Winter ❄' };
    await createFlag(target.baseUrl, target.key, { key: text, type: 'string', value: 'cached', runtime: 'shared' });
    await createFlag(target.baseUrl, target.key, { key: loot, type: 'json', value: lootValue, runtime: 'server' });
    const online = connect({ cacheFile });
    await online.client.ready();
    const servedOnline = online.client.all();
    await online.client.close();

    const closedPort = await portNobodyListensOn();
    const down = `http://127.0.0.1:${closedPort}/v1`;
    const offline = connect({ baseUrl: down, cacheFile });
    await offline.client.ready();
    expect(offline.client.getString(text, '')).toBe('cached');
    expect(offline.client.getJson(loot, null)).toEqual(lootValue);
    expect(offline.client.all()).toEqual(servedOnline);
    expect(offline.client.clientSafe()).toMatchObject({ [text]: 'cached' });
    expect(offline.client.clientSafe()).not.toHaveProperty(loot);
    expect(await eventually(() => offline.errors.some((error) => error.kind === 'network'), 5_000)).toBe(true);

    const withoutCache = connect({ baseUrl: down, cacheFile: join(folder, 'missing.json') });
    await expect(withoutCache.client.ready()).rejects.toMatchObject({ kind: 'network' });
  });

  it('5. the stream: a change written through the API is served within a second', async () => {
    const key = unique('sdk-ts-stream');
    const id = await createFlag(target.baseUrl, target.key, { key, type: 'number', value: 1, runtime: 'shared' });
    const { client, recorder } = connect({ stream: true });
    const changed: string[][] = [];
    client.on('change', (keys) => changed.push(keys));
    await client.ready();
    expect(client.getNumber(key, 0)).toBe(1);
    expect(await eventually(() => recorder.requests.some((request) => request.path.endsWith('/stream') && request.status === 200), 5_000)).toBe(true);

    await setFlagValue(target.baseUrl, target.key, id, 'number', 2);
    const written = Date.now();
    expect(await eventually(() => client.getNumber(key, 0) === 2, 1_000)).toBe(true);
    expect(Date.now() - written).toBeLessThanOrEqual(1_000);
    expect(changed.flat()).toContain(key);
    // Through the stream: a poll would come 18 to 22 s after the first read.
    expect(configRequests(recorder).length).toBeGreaterThanOrEqual(2);
  });

  it('6. the relay filter: clientSafe() has only the shared flags, resolved for the player, never a rule', async () => {
    const [s1, s2, s3, v1, v2] = ['s1', 's2', 's3', 'v1', 'v2'].map((name) => unique(`sdk-ts-relay-${name}`));
    const europe = (value: number) => [{ id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west'] }], value }];
    const s2Value = { tiers: { rare: [1, 2] }, name: 'ä' };
    await createFlag(target.baseUrl, target.key, { key: s1, type: 'boolean', value: true, runtime: 'shared' });
    await createFlag(target.baseUrl, target.key, { key: s2, type: 'json', value: s2Value, runtime: 'shared' });
    await createFlag(target.baseUrl, target.key, { key: v1, type: 'string', value: 'secret', runtime: 'server' });
    await createFlag(target.baseUrl, target.key, { key: s3, type: 'number', value: 1, runtime: 'shared', rules: europe(2) });
    await createFlag(target.baseUrl, target.key, { key: v2, type: 'number', value: 5, runtime: 'server', rules: europe(6) });
    const { client } = connect();
    await client.ready();
    // The organization may hold other flags (a shared service, earlier runs): only this test's count.
    const mine = (answer: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(answer).filter(([key]) => [s1, s2, s3, v1, v2].includes(key)));

    expect(mine(client.clientSafe())).toEqual({ [s1]: true, [s2]: s2Value, [s3]: 1 });
    expect(mine(client.clientSafe({ region: 'eu-west' }))).toEqual({ [s1]: true, [s2]: s2Value, [s3]: 2 });
    expect(mine(client.all({ region: 'eu-west' }))).toEqual({ [s1]: true, [s2]: s2Value, [s3]: 2, [v1]: 'secret', [v2]: 6 });
    expect(JSON.stringify(client.clientSafe({ region: 'eu-west' }))).not.toMatch(/"rules"|"conditions"|secret/);
  });
});

/** A loopback port that was free a moment ago and that nothing listens on now. */
async function portNobodyListensOn(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
