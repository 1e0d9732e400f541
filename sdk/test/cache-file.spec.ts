import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { freePort } from '../../src/common/free-port';
import { api, createFlag } from '../../test/factories/flags.factory';
import { bearer } from '../../test/factories/organizations.factory';
import { useTestApp } from '../../test/support/test-suite';
import { FlagstoreError } from '../src';
import { collectErrors, nextChange, tick, useClients } from './support/client-harness';
import { RecordingFetch } from './support/recording-fetch';

describe('FlagstoreClient cacheFile', () => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true });
  const newClient = useClients();
  let directory: string;
  let cacheFile: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'flagstore-sdk-cache-'));
    cacheFile = join(directory, 'flags.json');
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const configBody = async () => (await request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200)).body;

  /** A cache file written by a client that reached the service. */
  async function warmCache(): Promise<void> {
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile });
    await client.ready();
    await client.close();
  }

  async function createFlags() {
    await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    await createFlag(t, org.key, { key: 'anti-cheat-threshold', type: 'number', value: 0.9, runtime: 'server' });
    return createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
  }

  it('keeps the last good payload in cacheFile, replaced in one step, and rewrites it only when it changes', async () => {
    const motd = await createFlags();
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile });
    await client.ready();
    await client.close();

    const { generatedAt: _generatedAt, ...served } = await configBody();
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toEqual({ ...served, generatedAt: expect.any(String) });
    expect(readdirSync(directory)).toEqual(['flags.json']); // no temporary file left behind
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);

    // A 304 leaves it as it is (same inode, same bytes); a 200 with a new payload replaces it by a rename.
    const second = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile });
    await second.client.ready();
    expect(second.recorder.polls[0].status).toBe(304);
    const { ino } = statSync(cacheFile);
    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP!' }).expect(200);
    const changed = nextChange(second.client);
    second.scheduler.runNext();
    await changed;
    await second.client.close();

    expect(statSync(cacheFile).ino).not.toBe(ino);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).flags).toContainEqual({ key: 'motd', type: 'string', value: 'Double XP!', runtime: 'shared' });
    expect(readdirSync(directory)).toEqual(['flags.json']);
    expect(scheduler.pending()).toEqual([]); // the closed first client
  });

  it('starts from cacheFile while the service is down, and keeps trying', async () => {
    await createFlags();
    await warmCache();

    const downUrl = `http://127.0.0.1:${await freePort()}/v1`; // nothing listens there
    const { client, scheduler } = newClient({ baseUrl: downUrl, apiKey: org.key, cacheFile });
    const errors = collectErrors(client);
    await client.ready();

    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    expect(client.getString('motd', '')).toBe('Hello');
    expect(client.clientSafe()).toEqual({ 'pvp-enabled': true, motd: 'Hello' });
    expect(errors).toEqual([expect.objectContaining({ kind: 'network', status: undefined })]);
    expect(errors[0].message).toMatch(/ECONNREFUSED/);
    expect(scheduler.pending()).toEqual([1_000]);
  });

  it('catches up when the service is back: the cached etag in If-None-Match, a change for what differs, the file updated', async () => {
    const motd = await createFlags();
    await warmCache();
    const cachedEtag = JSON.parse(readFileSync(cacheFile, 'utf8')).etag as string;

    const recorder = new RecordingFetch();
    recorder.down();
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile }, recorder);
    await client.ready();
    expect(recorder.polls[0].headers['if-none-match']).toBe(`W/"${cachedEtag}"`);

    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Back online' }).expect(200);
    recorder.up();
    const changed = nextChange(client);
    scheduler.runNext();
    expect(await changed).toEqual(['motd']);
    expect(client.getString('motd', '')).toBe('Back online');
    await client.close();
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).etag).toBe((await configBody()).etag);
  });

  it('without service or cache, ready() rejects; the client keeps trying and reports every key once it gets them', async () => {
    await createFlags();
    const recorder = new RecordingFetch();
    recorder.down();
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile }, recorder);

    const rejection = await client.ready().catch((error: unknown) => error);
    expect(rejection).toBeInstanceOf(FlagstoreError);
    expect(rejection).toMatchObject({ kind: 'network' });
    expect(client.getBoolean('pvp-enabled', false)).toBe(false);
    expect(await tick(scheduler)).toBe(2_000); // still failing: backing off

    recorder.up();
    const changed = nextChange(client);
    scheduler.runNext();
    expect(await changed).toEqual(['anti-cheat-threshold', 'motd', 'pvp-enabled']);
    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
  });

  it('reports a cache file it cannot read, and goes on from the service', async () => {
    await createFlags();
    writeFileSync(cacheFile, '{"etag": "half-written');
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile });
    const errors = collectErrors(client);
    await client.ready();
    await client.close();

    expect(errors).toEqual([expect.objectContaining({ kind: 'cache' })]);
    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).etag).toBe((await configBody()).etag);
  });

  it('does not start from a cache file that is not a config payload', async () => {
    writeFileSync(cacheFile, JSON.stringify({ etag: 'x', flags: [{ key: 'pvp-enabled', type: 'boolean', value: 'yes', runtime: 'shared' }] }));
    const recorder = new RecordingFetch();
    recorder.down();
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile }, recorder);
    const errors = collectErrors(client);

    await expect(client.ready()).rejects.toMatchObject({ kind: 'network' });
    expect(errors.map((error) => error.kind)).toEqual(['cache', 'network']);
    expect(client.all()).toEqual({});
  });

  it('reports a cache file it cannot write, and keeps serving', async () => {
    await createFlags();
    const unwritable = join(directory, 'missing-folder', 'flags.json');
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, cacheFile: unwritable });
    const errors = collectErrors(client);
    await client.ready();
    await client.close();

    expect(errors).toEqual([expect.objectContaining({ kind: 'cache', message: expect.stringMatching(/could not be written/) })]);
    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    expect(readdirSync(directory)).toEqual([]);
  });
});
