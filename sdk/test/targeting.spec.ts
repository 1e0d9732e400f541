import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { api, createFlag } from '../../test/factories/flags.factory';
import { useTestApp } from '../../test/support/test-suite';
import { FlagRule, JsonValue } from '../src';
import { bucketOf, evaluateFlag } from '../src/targeting';
import { nextChange, nextError, useClients } from './support/client-harness';
import { RecordingFetch } from './support/recording-fetch';

interface Vectors {
  buckets: { flagKey: string; value: string; bucket: number }[];
  flags: { key: string; type: 'boolean' | 'string' | 'number' | 'json'; value: JsonValue; rules?: FlagRule<JsonValue>[] }[];
  evaluations: { flag: string; context: Record<string, unknown>; expected: { value: JsonValue; reason: string; variant: string } }[];
}

/** The service's own vectors (its evaluator and OFREP pass the same file): the SDK's copy must never drift from them. */
const vectors = JSON.parse(readFileSync(resolve(__dirname, '../../test/fixtures/targeting-vectors.json'), 'utf8')) as Vectors;
const flagsByKey = new Map(vectors.flags.map((flag) => [flag.key, flag]));

describe("the SDK's evaluator against the shared test vectors", () => {
  it.each(vectors.buckets)('bucket("$flagKey", "$value") is $bucket', ({ flagKey, value, bucket }) => {
    expect(bucketOf(flagKey, value)).toBe(bucket);
  });

  it.each(vectors.evaluations.map((vector) => [vector.flag, JSON.stringify(vector.context), vector]))('%s with %s', (_flag, _context, vector) => {
    expect(evaluateFlag(flagsByKey.get(vector.flag)!, vector.context)).toEqual(vector.expected);
  });
});

describe('FlagstoreClient targeting, against the service', () => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true });
  const newClient = useClients();

  async function createVectorFlags(): Promise<void> {
    for (const flag of vectors.flags)
      await api(t, org.key)
        .post('/flags')
        .send({ name: flag.key, ...flag })
        .expect(201);
  }

  const getter = (client: ReturnType<typeof newClient>['client'], type: string) =>
    ({
      boolean: (key: string, context: Record<string, unknown>) => client.getBoolean(key, false, context),
      string: (key: string, context: Record<string, unknown>) => client.getString(key, '', context),
      number: (key: string, context: Record<string, unknown>) => client.getNumber(key, 0, context),
      json: (key: string, context: Record<string, unknown>) => client.getJson(key, null, context),
    })[type]!;

  it('gives every vector through getBoolean, getString, getNumber and getJson, from the rules the config poll serves', async () => {
    await createVectorFlags();
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key });
    await client.ready();
    for (const vector of vectors.evaluations) {
      const flag = flagsByKey.get(vector.flag)!;
      expect({ vector, got: getter(client, flag.type)(flag.key, vector.context) }).toEqual({ vector, got: vector.expected.value });
    }
  });

  it("extends the default context with each call's, the call's attributes winning", async () => {
    await api(t, org.key)
      .post('/flags')
      .send({
        key: 'new-matchmaker',
        name: 'New matchmaker',
        type: 'string',
        value: 'v1',
        rules: [
          {
            id: 'eu-new-builds',
            conditions: [
              { attribute: 'region', operator: 'in', values: ['eu-west'] },
              { attribute: 'build', operator: 'semverGte', values: ['1.4'] },
            ],
            value: 'v2',
          },
        ],
      })
      .expect(201);
    const { client } = newClient({
      baseUrl: t.config.urls.baseUrl,
      apiKey: org.key,
      context: { serverId: 'eu-west-17', region: 'eu-west', build: '1.4.2' },
    });
    await client.ready();

    expect(client.getString('new-matchmaker', 'fallback')).toBe('v2');
    expect(client.getString('new-matchmaker', 'fallback', { build: '1.3.9' })).toBe('v1');
    expect(client.getString('new-matchmaker', 'fallback', { targetingKey: 'player-1' })).toBe('v2');
    expect(client.all({ region: 'us-east' })).toEqual({ 'new-matchmaker': 'v1' });
  });

  it("clientSafe(context) gives a player's resolved shared values, never the rules or a server flag", async () => {
    await api(t, org.key)
      .post('/flags')
      .send({
        key: 'double-xp',
        name: 'Double XP',
        type: 'boolean',
        value: false,
        rules: [{ id: 'late-players', conditions: [{ attribute: 'targetingKey', operator: 'percentage', values: [74.89, 100] }], value: true }],
      })
      .expect(201);
    await api(t, org.key)
      .post('/flags')
      .send({
        key: 'anti-cheat-threshold',
        name: 'Threshold',
        type: 'number',
        value: 5,
        runtime: 'server',
        rules: [{ id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west'] }], value: 3 }],
      })
      .expect(201);
    const { client } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, context: { region: 'eu-west' } });
    await client.ready();

    expect(client.clientSafe({ targetingKey: 'player-1' })).toEqual({ 'double-xp': true });
    expect(client.clientSafe({ targetingKey: 'player-2' })).toEqual({ 'double-xp': false });
    expect(client.clientSafe()).toEqual({ 'double-xp': false });
    expect(client.getNumber('anti-cheat-threshold', 0)).toBe(3);
  });

  it('announces a rules-only change as a change of that key', async () => {
    const flag = await createFlag(t, org.key, { key: 'pvp', type: 'boolean', value: false });
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key });
    await client.ready();
    expect(client.getBoolean('pvp', true, { region: 'eu-west' })).toBe(false);

    await api(t, org.key)
      .patch(`/flags/${flag.id}`)
      .send({ rules: [{ id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west'] }], value: true }] })
      .expect(200);
    const changed = nextChange(client);
    scheduler.runNext();
    expect(await changed).toEqual(['pvp']);
    expect(client.getBoolean('pvp', false, { region: 'eu-west' })).toBe(true);
    expect(client.getBoolean('pvp', true, { region: 'us-east' })).toBe(false);
  });

  it('refuses a payload whose rule value does not fit the type, and holds no condition of an operator it does not know', async () => {
    const recorder = new RecordingFetch();
    const payload = (rules: unknown[]) =>
      Response.json({
        etag: `e${rules.length}`,
        generatedAt: '',
        pollIntervalSeconds: 20,
        flags: [{ key: 'f', type: 'boolean', value: false, runtime: 'shared', rules }],
      });
    recorder.intercept(() => payload([{ id: 'future', conditions: [{ attribute: 'a', operator: 'regex', values: ['.*'] }], value: true }]));
    const { client, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key }, recorder);
    await client.ready();
    expect(client.getBoolean('f', true, { a: 'anything' })).toBe(false);

    recorder.intercept(() => payload([{ id: 'r', conditions: [], value: 'yes' }, {}]));
    const error = nextError(client);
    scheduler.runNext();
    expect((await error).message).toMatch(/rule #0's value is not a boolean/);
    expect(client.getBoolean('f', true, { a: 'anything' })).toBe(false);
  });
});
