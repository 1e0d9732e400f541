import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlagstoreClient, FlagstoreError } from '../src';
import type { JsonValue } from '../src/payload';
import { nextError } from './support/client-harness';
import { ManualScheduler } from './support/manual-scheduler';

/*
 * The payload fixtures every game-server SDK shares (test/fixtures/sdk: README.md says how to read them), through the
 * TypeScript SDK's public surface: each body served as is by a fetch of the test's own, answered 200, then the
 * getters, all() and clientSafe() asked what the fixture says. The C++ and C# SDKs run the same files.
 */

const FIXTURES = resolve(__dirname, '..', '..', 'test', 'fixtures', 'sdk');

type Context = Record<string, unknown>;
interface GetterCase {
  get: 'boolean' | 'string' | 'number' | 'json';
  key: string;
  fallback: JsonValue;
  context?: Context;
  expect: JsonValue;
  why?: string;
}
interface Answer {
  context?: Context;
  expect: Record<string, JsonValue>;
}
interface FixtureCase {
  name: string;
  payload: string;
  accepted: boolean;
  about: string;
  clientContext?: Context;
  etag?: string;
  ifNoneMatch?: string;
  pollIntervalSeconds?: number;
  getters?: GetterCase[];
  all?: Answer[];
  clientSafe?: Answer[];
}

const { cases } = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as { cases: FixtureCase[] };
const accepted = cases.filter((fixture) => fixture.accepted);
const refused = cases.filter((fixture) => !fixture.accepted);

/** A fetch that answers every config request with `bodies`' next entry (200), recording the request headers. */
function servedBodies(...bodies: string[]) {
  const requests: Record<string, string>[] = [];
  const fetch = async (_url: string | URL, init?: RequestInit) => {
    requests.push(Object.fromEntries(new Headers(init?.headers).entries()));
    const body = bodies[Math.min(requests.length - 1, bodies.length - 1)];
    return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  return { fetch, requests };
}

const body = (fixture: FixtureCase) => readFileSync(join(FIXTURES, fixture.payload), 'utf8');

describe('the shared payload fixtures (test/fixtures/sdk)', () => {
  const open: FlagstoreClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  function connect(fetch: ReturnType<typeof servedBodies>['fetch'], context?: Context) {
    const scheduler = new ManualScheduler();
    const client = new FlagstoreClient({ baseUrl: 'http://flags.test/v1', apiKey: 'fsk_fixture', context, fetch, scheduler, random: () => 0.5 });
    open.push(client);
    return { client, scheduler };
  }

  it('has cases of both kinds, each naming a body that exists', () => {
    expect(accepted.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const fixture of cases) expect(() => body(fixture)).not.toThrow();
  });

  describe.each(accepted.map((fixture) => [fixture.name, fixture] as const))('%s', (_name, fixture) => {
    it('is served: the getters, all() and clientSafe() answer as the fixture says', async () => {
      const { client } = connect(servedBodies(body(fixture)).fetch, fixture.clientContext);
      await client.ready();

      for (const getter of fixture.getters ?? []) {
        const call = { boolean: client.getBoolean, string: client.getString, number: client.getNumber, json: client.getJson }[getter.get] as (
          key: string,
          fallback: JsonValue,
          context?: Context,
        ) => JsonValue;
        const answer = call.call(client, getter.key, getter.fallback, getter.context);
        expect({ ...getter, answer }).toEqual({ ...getter, answer: getter.expect });
      }
      for (const { context, expect: expected } of fixture.all ?? []) expect(client.all(context)).toEqual(expected);
      for (const { context, expect: expected } of fixture.clientSafe ?? []) expect(client.clientSafe(context)).toEqual(expected);
    });

    it('polls again after pollIntervalSeconds with If-None-Match', async () => {
      const served = servedBodies(body(fixture));
      const { client, scheduler } = connect(served.fetch, fixture.clientContext);
      await client.ready();

      expect(scheduler.pending()).toEqual([fixture.pollIntervalSeconds! * 1000]);
      const next = scheduler.nextTimer();
      scheduler.runNext();
      await next;
      expect(served.requests[0]).not.toHaveProperty('if-none-match');
      expect(served.requests[1]['if-none-match']).toBe(fixture.ifNoneMatch);
      expect(fixture.ifNoneMatch).toBe(`W/"${fixture.etag}"`);
    });
  });

  describe.each(refused.map((fixture) => [fixture.name, fixture] as const))('%s', (_name, fixture) => {
    it('is refused as a whole: not ready on it, and a client that had a good payload keeps it', async () => {
      const first = connect(servedBodies(body(fixture)).fetch);
      await expect(first.client.ready()).rejects.toMatchObject({ kind: 'invalid-payload', status: 200 });
      expect(first.client.all()).toEqual({});

      const good = cases.find((other) => other.name === 'value-types')!;
      const { client, scheduler } = connect(servedBodies(body(good), body(fixture)).fetch);
      await client.ready();
      const before = client.all();
      const error = nextError(client);
      scheduler.runNext();
      expect(await error).toBeInstanceOf(FlagstoreError);
      expect((await error).kind).toBe('invalid-payload');
      expect(client.all()).toEqual(before);
      expect(client.getBoolean('pvp-enabled', false)).toBe(true);
    });
  });
});
