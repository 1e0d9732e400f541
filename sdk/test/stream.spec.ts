import request from 'supertest';
import { ConfigStreamHub, MAX_STREAMS_PER_KEY, STREAM_LIFETIME_MS } from '../../src/flag-config/stream/config-stream.hub';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../../test/factories/flags.factory';
import { admin, bearer, createApiKey } from '../../test/factories/organizations.factory';
import { eventually } from '../../test/support/eventually';
import { FakeClock } from '../../test/support/fake-clock';
import { openSse, SseConnection } from '../../test/support/sse-client';
import { TestApp } from '../../test/support/test-app';
import { useTestApp } from '../../test/support/test-suite';
import { collectErrors, Harness, nextChange, nextError, useClients } from './support/client-harness';

const STREAM_PATH = '/v1/flags/config/stream';

const etagOf = async (t: TestApp, key: string) => (await request(t.http).get('/v1/flags/config').set(bearer(key)).expect(200)).body.etag as string;

/** Until the client's stream is open: its last stream request answered 200, and the poll it replaces cancelled. */
async function streamOpen({ recorder, scheduler }: Harness, count = 1): Promise<void> {
  await eventually(() => recorder.streams.length === count && recorder.streams[count - 1].status === 200 && scheduler.pending().length === 0, {
    what: `stream #${count} open and polling paused`,
  });
}

describe('FlagstoreClient with stream: true, against the service’s change stream', () => {
  // The service's clock: a stream's lifetime ends when a test moves it and beats the hub, not after 10 real minutes.
  const clock = new FakeClock();
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true, clock });
  const newClient = useClients();
  const connect = (options: { streamSilenceTimeoutMs?: number; apiKey?: string } = {}) =>
    newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, stream: true, ...options });

  it('sees a change through the stream at once, and does not poll while the stream is open', async () => {
    const motd = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
    const harness = connect();
    const { client, recorder, scheduler } = harness;
    await client.ready();
    const etag = await etagOf(t, org.key);
    await streamOpen(harness);

    expect(recorder.streams[0].headers).toMatchObject({
      authorization: `Bearer ${org.key}`,
      accept: 'text/event-stream',
      // The etag it holds: the service then sends no event for a config the client already has.
      'last-event-id': etag,
    });
    expect(recorder.polls).toHaveLength(1);

    const changed = nextChange(client);
    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP!' }).expect(200);
    expect(await changed).toEqual(['motd']);
    expect(client.getString('motd', '')).toBe('Double XP!');
    // One re-read, conditional on the etag it had; no timer ever fired.
    expect(recorder.polls).toHaveLength(2);
    expect(recorder.polls[1]).toMatchObject({ status: 200, headers: { 'if-none-match': `W/"${etag}"` } });
    expect(scheduler.pending()).toEqual([]);
  });

  it('falls back to polling when the stream drops, and stops polling once it is back', async () => {
    const motd = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Hello' });
    const harness = connect();
    const { client, recorder, scheduler } = harness;
    const errors = collectErrors(client);
    await client.ready();
    await streamOpen(harness);

    // The stream's connection is cut, and it cannot be reopened for now.
    recorder.intercept((path) => {
      if (path === STREAM_PATH) throw new TypeError('fetch failed');
      return undefined;
    });
    const dropped = nextError(client);
    t.http.closeAllConnections();
    expect(await dropped).toMatchObject({ kind: 'stream' });
    expect(scheduler.pending()).toEqual([1_000, 20_000]); // the stream's first backoff step, and the poll interval

    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP!' }).expect(200);
    const changed = nextChange(client);
    scheduler.advance(20_000); // a reconnect fails at 1 s; the poll at 20 s finds the change
    expect(await changed).toEqual(['motd']);
    expect(recorder.polls.at(-1)).toMatchObject({ status: 200 });
    expect(errors.map((error) => error.kind)).toEqual(['stream', 'network']);

    recorder.up();
    await eventually(() => scheduler.pending().length === 2, { what: 'the next reconnect and the next poll' });
    scheduler.runNext(); // the reconnect
    await streamOpen(harness, 3);
    expect(recorder.streams[2].headers['last-event-id']).toBe(await etagOf(t, org.key));
  });

  it('reopens a stream the service ended (its 10-minute limit) after the retry hint, without an error', async () => {
    const harness = connect();
    const { client, recorder, scheduler } = harness;
    const errors = collectErrors(client);
    await client.ready();
    await streamOpen(harness);

    clock.advance(STREAM_LIFETIME_MS + 1_000);
    t.app.get(ConfigStreamHub).beat();
    await eventually(() => scheduler.pending().length === 2, { what: 'a reconnect and a poll scheduled' });
    const [reconnect, poll] = scheduler.pending();
    // The service's hint is 1–2 s; the client waits that times 1–2 (random 0.5: 1.5).
    expect(reconnect).toBeGreaterThanOrEqual(1_500);
    expect(reconnect).toBeLessThan(3_000);
    expect(poll).toBe(20_000);

    scheduler.runNext();
    await streamOpen(harness, 2);
    expect(recorder.polls).toHaveLength(1); // the etag it sent was current: no event, no re-read
    expect(errors).toEqual([]);
  });

  it('stops everything, stream and polling, on a 401: no request after it', async () => {
    const key = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
    const harness = connect({ apiKey: key.key });
    const { client, recorder, scheduler } = harness;
    await client.ready();
    await streamOpen(harness);

    // The service ends a revoked key's streams; the client's reconnect is then refused.
    const refused = nextError(client);
    await admin(t).delete(`/organizations/${org.id}/api-keys/${key.id}`).expect(204);
    await eventually(() => scheduler.pending().length === 2, { what: 'a reconnect and a poll scheduled' });
    scheduler.runNext();
    expect(await refused).toMatchObject({ kind: 'unauthorized', status: 401 });

    expect(scheduler.pending()).toEqual([]);
    const sent = recorder.requests.length;
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.requests).toHaveLength(sent);
    expect(recorder.requests.map((request) => [request.path, request.status])).toEqual([
      ['/v1/flags/config', 200],
      [STREAM_PATH, 200],
      [STREAM_PATH, 401],
    ]);
  });

  it('drops a stream that stays silent past streamSilenceTimeoutMs, and polls', async () => {
    const harness = connect({ streamSilenceTimeoutMs: 100 });
    const { client, scheduler } = harness;
    await client.ready();
    await streamOpen(harness);

    // The service sends nothing to a client whose etag is current (its keep-alive comes every 15 s).
    const error = await nextError(client);
    expect(error).toMatchObject({ kind: 'stream' });
    expect(error.message).toMatch(/silent for 100 ms/);
    expect(scheduler.pending()).toEqual([1_000, 20_000]);
  });

  describe('when the key already holds the most streams the service allows', () => {
    const held: SseConnection[] = [];
    afterEach(() => held.splice(0).forEach((connection) => connection.close()));

    it("waits out the stream's Retry-After on a 429: no poll and no reconnect before it has passed", async () => {
      for (let index = 0; index < MAX_STREAMS_PER_KEY; index++) {
        held.push(await openSse(`${t.config.urls.baseUrl}/flags/config/stream`, bearer(org.key)));
      }
      const harness = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, stream: true, random: () => 0 });
      const { client, recorder, scheduler } = harness;
      const refused = nextError(client);
      await client.ready();
      const error = await refused;
      expect(error).toMatchObject({ kind: 'rate-limited', status: 429, retryAfterSeconds: 60 });
      await eventually(() => scheduler.pending().length === 2, { what: 'a poll and a reconnect scheduled' });
      expect(scheduler.pending()).toEqual([18_000, 60_000]);
      const sent = recorder.requests.length;
      held.splice(0).forEach((connection) => connection.close());
      await eventually(() => t.app.get(ConfigStreamHub).size === 0, { what: "the service's streams closed" });

      // The poll falls due first, inside the hold: it waits for the hold's end instead of asking.
      scheduler.advance(59_999);
      expect(recorder.requests).toHaveLength(sent);
      scheduler.advance(1);
      expect(recorder.requests.length).toBeGreaterThan(sent);
      await streamOpen(harness, 2);
    });
  });
});

describe('FlagstoreClient with stream: true, against a service whose stream is off', () => {
  const { t, org } = useTestApp({ leanConfigPoll: true, env: { STREAMS_ENABLED: 'false' } });
  const newClient = useClients();

  it('polls as without a stream, and retries the stream with backoff', async () => {
    const flag = await createFlag(t, org.key, { key: 'pvp-enabled', type: 'boolean', value: true });
    const { client, recorder, scheduler } = newClient({ baseUrl: t.config.urls.baseUrl, apiKey: org.key, stream: true });
    const errors = collectErrors(client);
    await client.ready();
    await eventually(() => errors.length === 1, { what: 'the stream refused' });
    expect(errors[0]).toMatchObject({ kind: 'http', status: 404 });
    expect(scheduler.pending()).toEqual([1_000, 20_000]);

    const retried = nextError(client);
    scheduler.runNext();
    expect(await retried).toMatchObject({ status: 404 });
    await eventually(() => scheduler.pending().length === 2, { what: 'the next retry' });
    expect(scheduler.pending()).toEqual([2_000, 19_000]);

    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
    const changed = nextChange(client);
    scheduler.advance(19_000);
    expect(await changed).toEqual(['pvp-enabled']);
    await eventually(() => recorder.streams.length === 3 && recorder.streams.every((sent) => sent.status === 404), {
      what: 'three stream attempts, each refused',
    });
  });
});
