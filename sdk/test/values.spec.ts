import { api, createFlag } from '../../test/factories/flags.factory';
import { useTestApp } from '../../test/support/test-suite';
import { FlagstoreError } from '../src';
import { nextChange, nextError, tick, useClients } from './support/client-harness';
import { RecordingFetch } from './support/recording-fetch';

describe('FlagstoreClient values', () => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true });
  const newClient = useClients();
  const connect = () => newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key });

  async function createTypedFlags() {
    await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Double XP this weekend' });
    await createFlag(t, org.key, { key: 'xp-multiplier', type: 'number', value: 2.5 });
    await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { tiers: [1, 2], rare: null } });
    await createFlag(t, org.key, { key: 'matchmaker-secret-weight', type: 'number', value: 0.75, runtime: 'server' });
  }

  it('serves each flag with its own type from the service', async () => {
    await createTypedFlags();
    const { client } = connect();
    await client.ready();

    expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    expect(client.getString('motd', '')).toBe('Double XP this weekend');
    expect(client.getNumber('xp-multiplier', 1)).toBe(2.5);
    expect(client.getJson('loot-table', {})).toEqual({ tiers: [1, 2], rare: null });
    expect(client.getNumber('matchmaker-secret-weight', 0)).toBe(0.75);
    expect(client.all()).toEqual({
      'pvp-enabled': true,
      motd: 'Double XP this weekend',
      'xp-multiplier': 2.5,
      'loot-table': { tiers: [1, 2], rare: null },
      'matchmaker-secret-weight': 0.75,
    });
  });

  it('gives the fallback for an unknown key, and for a flag of another type than the getter asks for', async () => {
    await createTypedFlags();
    await createFlag(t, org.key, { key: 'json-number', type: 'json', value: 5 });
    const { client } = connect();

    // Before anything has arrived, every read is its fallback.
    expect(client.getBoolean('pvp-enabled', false)).toBe(false);
    await client.ready();

    expect(client.getBoolean('no-such-flag', false)).toBe(false);
    expect(client.getString('no-such-flag', 'fallback')).toBe('fallback');
    expect(client.getNumber('no-such-flag', 42)).toBe(42);
    expect(client.getJson('no-such-flag', { fallback: true })).toEqual({ fallback: true });

    expect(client.getBoolean('motd', true)).toBe(true);
    expect(client.getString('xp-multiplier', 'fallback')).toBe('fallback');
    expect(client.getNumber('pvp-enabled', 7)).toBe(7);
    expect(client.getNumber('loot-table', 7)).toBe(7);
    // getJson is as strict as the others: only `json` flags, so a flag whose type changes never feeds a JSON reader.
    expect(client.getJson('pvp-enabled', 'fallback')).toBe('fallback');
    expect(client.getJson('motd', 'fallback')).toBe('fallback');
    // ... and a `json` flag holding a number is still not a `number` flag.
    expect(client.getJson('json-number', 0)).toBe(5);
    expect(client.getNumber('json-number', 0)).toBe(0);
  });

  it('hands out frozen JSON values, so a caller cannot change what later reads return', async () => {
    await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { tiers: [1, 2] } });
    const { client } = connect();
    await client.ready();

    const table = client.getJson<{ tiers: number[] }>('loot-table', { tiers: [] });
    expect(() => table.tiers.push(3)).toThrow(TypeError);
    expect(() => Object.assign(client.all(), { injected: true })).not.toThrow(); // all() is a fresh object each time
    expect(client.getJson('loot-table', {})).toEqual({ tiers: [1, 2] });
    expect(client.all()).toEqual({ 'loot-table': { tiers: [1, 2] } });
  });

  it('clientSafe() holds only shared flags, also once a shared flag becomes server-only', async () => {
    await createTypedFlags();
    const motd = await createFlag(t, org.key, { key: 'banner', type: 'string', value: 'Welcome' });
    const { client, scheduler } = connect();
    await client.ready();

    expect(client.clientSafe()).toEqual({
      'pvp-enabled': true,
      motd: 'Double XP this weekend',
      'xp-multiplier': 2.5,
      'loot-table': { tiers: [1, 2], rare: null },
      banner: 'Welcome',
    });

    await api(t, org.key).patch(`/flags/${motd.id}`).send({ runtime: 'server' }).expect(200);
    const changed = nextChange(client);
    scheduler.runNext();
    expect(await changed).toEqual(['banner']);
    expect(client.clientSafe()).not.toHaveProperty('banner');
    expect(client.clientSafe()).not.toHaveProperty('matchmaker-secret-weight');
    expect(client.getString('banner', '')).toBe('Welcome'); // the server itself still reads it
  });

  it('clientSafe() leaves out a flag whose runtime it does not know', async () => {
    const recorder = new RecordingFetch();
    recorder.intercept(() =>
      Response.json({
        etag: 'stand-in',
        generatedAt: new Date().toISOString(),
        pollIntervalSeconds: 20,
        flags: [
          { key: 'shared-one', type: 'boolean', value: true, runtime: 'shared' },
          { key: 'future-runtime', type: 'boolean', value: true, runtime: 'edge' },
        ],
      }),
    );
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key }, recorder);
    await client.ready();

    expect(client.clientSafe()).toEqual({ 'shared-one': true });
    expect(client.getBoolean('future-runtime', false)).toBe(true);
  });

  it('refuses a payload with a malformed flag as a whole, and keeps serving the last good one', async () => {
    await createTypedFlags();
    const { client, scheduler, recorder } = connect();
    await client.ready();
    const before = client.all();

    recorder.intercept(() =>
      Response.json({
        etag: 'broken',
        generatedAt: new Date().toISOString(),
        pollIntervalSeconds: 20,
        flags: [
          { key: 'pvp-enabled', type: 'boolean', value: false, runtime: 'shared' },
          { key: 'xp-multiplier', type: 'number', value: 'three', runtime: 'shared' },
        ],
      }),
    );
    const error = nextError(client);
    const delay = await tick(scheduler);
    expect(await error).toMatchObject({ kind: 'invalid-payload', status: 200 });
    expect(await error).toBeInstanceOf(FlagstoreError);
    expect(delay).toBe(1_000); // retried like any failure
    expect(client.all()).toEqual(before);
  });
});
