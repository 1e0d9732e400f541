import { FlagstoreClient } from '../src';
import { collectErrors, nextChange } from './support/client-harness';
import { ManualScheduler } from './support/manual-scheduler';
import { RecordingFetch } from './support/recording-fetch';
import { call, createFlag, createKey, createOrganization, unique, useScenarioTarget } from './support/scenario-target';

/*
 * Scenario 2 of test/fixtures/sdk/SCENARIOS.md, apart from the others so that its wait (the service's own rate-limit
 * window, up to a minute of real time) runs beside them: Retry-After obeyed on a real 429.
 */

/** The config budget is 1200 requests a minute per key: a few more than that reach the 429. */
const BUDGET_CEILING = 1300;
const BURST = 20;

describe('SDK scenario 2 against a real service: Retry-After', () => {
  const target = useScenarioTarget();
  let client: FlagstoreClient | undefined;
  afterEach(() => client?.close());

  it('after a 429 the client sends nothing before Retry-After has passed, then its next request is served', async () => {
    let key = target.key;
    if (target.adminToken !== undefined) {
      // A key of its own: FLAGSTORE_KEY stays usable for the other scenarios.
      const organization = await createOrganization(target.baseUrl, target.adminToken, unique('sdk-ts-rate-limit'));
      key = (await createKey(target.baseUrl, target.adminToken, organization.id, ['FLAGS_READ'])).key;
      await createFlag(target.baseUrl, organization.writeKey, { key: 'sdk-ts-rate-limited', type: 'boolean', value: true });
    } else {
      await createFlag(target.baseUrl, key, { key: unique('sdk-ts-rate-limited'), type: 'boolean', value: true });
    }

    // Spend the key's budget.
    let retryAfter: number | undefined;
    for (let sent = 0; retryAfter === undefined && sent < BUDGET_CEILING; sent += BURST) {
      const answers = await Promise.all(Array.from({ length: BURST }, () => call(target.baseUrl, key, 'GET', '/flags/config')));
      const limited = answers.find((answer) => answer.status === 429);
      if (limited) retryAfter = Number(limited.headers.get('retry-after'));
    }
    expect(retryAfter).toBeGreaterThanOrEqual(1);

    const scheduler = new ManualScheduler();
    const recorder = new RecordingFetch();
    client = new FlagstoreClient({ baseUrl: target.baseUrl, apiKey: key, fetch: recorder.fetch, scheduler, random: () => 0 });
    const errors = collectErrors(client);
    const limitedAt = Date.now();
    await expect(client.ready()).rejects.toMatchObject({ kind: 'rate-limited', status: 429 });
    const told = errors[0].retryAfterSeconds!;
    expect(told).toBeGreaterThanOrEqual(1);
    expect(told).toBeLessThanOrEqual(60);

    // Its only wait is Retry-After's (random 0: no jitter on top), and nothing was sent meanwhile.
    expect(scheduler.pending()).toEqual([told * 1000]);
    expect(recorder.requests).toHaveLength(1);

    // The service's window ends by then, in real time: the next request is answered 200 and the flags are served.
    await new Promise((done) => setTimeout(done, Math.max(0, limitedAt + told * 1000 - Date.now())));
    const first = nextChange(client);
    scheduler.runNext();
    const keys = await first;
    expect(keys.length).toBeGreaterThanOrEqual(1);
    expect(recorder.requests).toHaveLength(2);
    expect(recorder.requests[1].status).toBe(200);
  }, 150_000);
});
