import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { hashApiKey } from '../../src/auth/api-key';
import { ChangeFeed } from '../../src/invalidation/change-feed';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { api } from '../factories/flags.factory';
import { bearer } from '../factories/organizations.factory';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { CHANGE_FEED_READ, queriesDuring } from '../support/queries';
import { createTestApp, TestApp } from '../support/test-app';

interface Tenant {
  organizationId: string;
  key: string;
  /** The ETag each instance last served this tenant. */
  etags: Map<TestApp, string>;
}

const FLAGS_PER_TENANT = 3;
/** How often each tenant is polled (by all its servers together) in the scenario of README, "The poll at scale". */
const POLL_PERIOD_MS = 6_000;

/**
 * Many small tenants polled now and then, on two instances of one deployment whose clocks move only when the test
 * says: the database work of the poll follows changes, not organizations or polls. Every statement either instance
 * sends is counted (test/support/queries.ts).
 */
describe('the config poll at scale', () => {
  let a: TestApp;
  let b: TestApp;
  const clocks = new Map<TestApp, FakeClock>();
  const tenants: Tenant[] = [];

  beforeAll(async () => {
    const clockA = new FakeClock();
    const clockB = new FakeClock(clockA.now());
    a = await createTestApp({}, { clock: clockA });
    b = await createTestApp({}, { sameDatabaseAs: a, clock: clockB });
    clocks.set(a, clockA).set(b, clockB);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  /** `count` organizations, each with a FLAGS_READ+FLAGS_WRITE key and a few flags, written straight to the tables. */
  async function addTenants(count: number): Promise<void> {
    const keys = Array.from({ length: count }, () => `fsk_${randomBytes(32).toString('base64url')}`);
    const { rows } = await a.db.query<{ id: string }>(
      `INSERT INTO organizations (name, storage_allocation) SELECT 'Tenant ' || n, 0 FROM generate_series(1, $1) n RETURNING id`,
      [count],
    );
    const ids = rows.map(({ id }) => id);
    await a.db.query(
      `INSERT INTO api_keys (organization_id, name, key_hash, permissions)
       SELECT id, 'game servers', hash, '{FLAGS_READ,FLAGS_WRITE}' FROM unnest($1::uuid[], $2::text[]) AS t(id, hash)`,
      [ids, keys.map(hashApiKey)],
    );
    await a.db.query(
      `INSERT INTO flags (organization_id, key, name, type, value)
       SELECT id, 'flag-' || n, 'Flag ' || n, 'boolean', 'true' FROM unnest($1::uuid[]) AS t(id), generate_series(1, $2) n`,
      [ids, FLAGS_PER_TENANT],
    );
    tenants.push(...ids.map((organizationId, index) => ({ organizationId, key: keys[index], etags: new Map<TestApp, string>() })));
  }

  /** One poll of `tenant` on `app` with the ETag it last got there; answers the status and the first flag's value. */
  async function poll(app: TestApp, tenant: Tenant): Promise<{ status: number; value?: unknown }> {
    const etag = tenant.etags.get(app);
    const call = request(app.http).get('/v1/flags/config').set(bearer(tenant.key));
    const response = await (etag ? call.set('If-None-Match', etag) : call);
    if (response.status === 200) tenant.etags.set(app, response.headers.etag as string);
    return { status: response.status, value: response.body?.flags?.[0]?.value };
  }

  async function pollAll(app: TestApp, some: Tenant[], expected: number): Promise<void> {
    for (let start = 0; start < some.length; start += 50) {
      const answers = await Promise.all(some.slice(start, start + 50).map((tenant) => poll(app, tenant)));
      expect(answers.map(({ status }) => status)).toEqual(answers.map(() => expected));
    }
  }

  /**
   * One POLL_PERIOD_MS on both instances, nothing changing: the time moves a feed period at a time, each instance's
   * change feed reads once per period (what its timer would run), and each tenant is polled once on each instance,
   * spread over the period. Answers the statements sent, and the polls made.
   */
  async function quietPeriod(): Promise<{ statements: number; reads: number; polls: number }> {
    const steps = POLL_PERIOD_MS / ChangeFeed.PERIOD_MS;
    let reads = 0;
    const statements = await queriesDuring(async () => {
      reads = await queriesDuring(async () => {
        for (let step = 0; step < steps; step += 1) {
          const slice = tenants.filter((_, index) => index % steps === step);
          for (const app of [a, b]) {
            clocks.get(app)!.advance(ChangeFeed.PERIOD_MS);
            await app.app.get(ChangeFeed).tick();
            await pollAll(app, slice, 304);
          }
        }
      }, CHANGE_FEED_READ);
    });
    return { statements, reads, polls: tenants.length * 2 };
  }

  it('costs the database the same few reads per period however many organizations poll, and nothing per poll', async () => {
    await addTenants(300);
    for (const app of [a, b]) await pollAll(app, tenants, 200); // keys caught up, payloads built once
    const first = await quietPeriod();
    const second = await quietPeriod();
    const perThousand = (first.statements * 1000) / first.polls;
    console.info(`300 organizations: ${first.statements} statements for ${first.polls} polls (${perThousand.toFixed(1)} per 1,000)`);
    // The change feed's reads are all: one per instance per feed period, none for the polls, keys or payloads.
    expect(first).toEqual({ statements: first.reads, reads: 2 * (POLL_PERIOD_MS / ChangeFeed.PERIOD_MS), polls: 600 });
    expect(second).toEqual(first);
    expect(perThousand).toBeLessThanOrEqual(20);

    await addTenants(300);
    for (const app of [a, b]) await pollAll(app, tenants.slice(300), 200);
    const doubled = await quietPeriod();
    expect(doubled).toEqual({ ...first, polls: 1200 });
  });

  it('shows an edit on the next poll of the instance that made it, within 1 s on the other, and within a feed period when its message was lost', async () => {
    await addTenants(1);
    const tenant = tenants[tenants.length - 1];
    const { body: flags } = await api(a, tenant.key).get('/flags').expect(200);
    const flagId = flags.results.find((flag: { key: string }) => flag.key === 'flag-1').id as string;
    for (const app of [a, b]) expect(await poll(app, tenant)).toEqual({ status: 200, value: true });

    await api(a, tenant.key).patch(`/flags/${flagId}`).send({ type: 'boolean', value: false }).expect(200);
    expect(await poll(a, tenant)).toEqual({ status: 200, value: false });
    await eventually(async () => (await poll(b, tenant)).value === false, { timeoutMs: 1_000, what: 'the other instance serving the edit' });

    // The instance that made the next edit died between its commit and its announcement: no message goes out.
    const publish = jest.spyOn(a.app.get(InvalidationBus), 'publish').mockImplementation(() => undefined);
    try {
      await api(a, tenant.key).patch(`/flags/${flagId}`).send({ type: 'boolean', value: true }).expect(200);
    } finally {
      publish.mockRestore();
    }
    expect(await poll(b, tenant)).toMatchObject({ status: 304 }); // nothing told it yet
    expect(clocks.get(b)!.intervals).toContain(ChangeFeed.PERIOD_MS);
    expect(ChangeFeed.PERIOD_MS).toBeLessThanOrEqual(5_000);
    clocks.get(b)!.advance(ChangeFeed.PERIOD_MS);
    await b.app.get(ChangeFeed).tick();
    expect(await poll(b, tenant)).toEqual({ status: 200, value: true });
  });
});
