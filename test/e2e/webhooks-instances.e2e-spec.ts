import { Permission } from '../../src/auth/permission';
import { DeliveryOutcome, Outbox } from '../../src/outbox/outbox';
import { api, createFlag } from '../factories/flags.factory';
import { createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { ReceivedWebhook, verifyStandardWebhook, WebhookReceiver } from '../support/servers/webhook-receiver';
import { createTestApp, TestApp } from '../support/test-app';

const LOOPBACK = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
/** Past the first retry's 5 s and its jitter. */
const FIRST_RETRY = 6_000;
/** Past a claimed row's lease (twice the channel's 15 s attempt bound). */
const PAST_LEASE = 31_000;

/**
 * Webhook delivery on several instances of one deployment and across a restart (issue 35, "Done when"): nothing lost,
 * nothing duplicated past a retry, nothing reordered. The instances share a database and a clock the test moves, and
 * run their outbox at the same moments (what their timers do every 250 ms), so they really race for the rows.
 */
describe('webhook delivery across instances', () => {
  const receiver = new WebhookReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());
  beforeEach(() => {
    receiver.clear();
    receiver.respond = () => 200;
  });

  interface Deployment {
    org: TestOrganization;
    key: string;
    admin: SignedIn;
    secret: string;
  }

  async function deploy(t: TestApp): Promise<Deployment> {
    const org = await createOrganization(t, 'Instances');
    await subscribe(t, org.id);
    const admin = await memberSignedIn(t, org.id, 'admin');
    const key = (await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE])).key;
    const created = await asSession(t, admin, org.id)
      .post('/organization/webhooks')
      .send({ url: receiver.url(), events: ['flag.changed'], format: 'standard' })
      .expect(201);
    return { org, key, admin, secret: created.body.secret };
  }

  /** The value each accepted delivery set, in the order the receiver accepted them. */
  const acceptedValues = () => receiver.accepted.map((delivery) => delivery.body.data.changes[0].after.value as number);

  /**
   * What at-least-once allows: each event accepted exactly once; an event sent again only after an attempt of it that
   * failed or got no recorded answer; and no event's first arrival before the previous event was accepted.
   */
  function expectInOrderOnce(deliveries: ReceivedWebhook[], secret: string): void {
    const accepted = new Set<string>();
    let previous: string | null = null;
    for (const delivery of deliveries) {
      expect(verifyStandardWebhook(secret, delivery, Number(delivery.timestamp))).toBe(true);
      expect(accepted.has(delivery.id)).toBe(false);
      if (delivery.id !== previous && previous !== null) expect(accepted.has(previous)).toBe(true);
      if (delivery.answered < 300) accepted.add(delivery.id);
      previous = delivery.id;
    }
  }

  it('two instances deliver a burst written through both, each event accepted once and in commit order, one at a time per endpoint', async () => {
    const clock = new FakeClock(Date.parse('2026-12-04T09:00:00Z'));
    const a = await createTestApp(LOOPBACK, { clock });
    const b = await createTestApp(LOOPBACK, { clock, sameDatabaseAs: a });
    try {
      const { key, secret } = await deploy(a);
      const flag = await createFlag(a, key, { key: 'burst', type: 'number', value: 0 });
      // Every 4th arrival fails: retries are interleaved with first attempts.
      let arrivals = 0;
      receiver.respond = () => ({ status: ++arrivals % 4 === 0 ? 503 : 200, delayMs: 5 });
      const values = Array.from({ length: 24 }, (_, index) => index + 1);
      for (const value of values)
        await api(value % 2 === 0 ? a : b, key)
          .patch(`/flags/${flag.id}`)
          .send({ type: 'number', value })
          .expect(200);

      for (let round = 0; round < 100 && acceptedValues().filter((value) => value > 0).length < values.length; round++) {
        const outcomes: DeliveryOutcome[][] = await Promise.all([a.app.get(Outbox).deliverDue(), b.app.get(Outbox).deliverDue()]);
        if (outcomes.every((list) => list.length === 0)) clock.advance(FIRST_RETRY);
      }
      expect(acceptedValues()).toEqual([0, ...values]);
      expectInOrderOnce(receiver.received, secret);
      expect(receiver.maxInFlight).toBe(1);
      const failures = receiver.received.filter((delivery) => delivery.answered >= 300).length;
      expect(failures).toBeGreaterThan(3);
      expect(receiver.received).toHaveLength(values.length + 1 + failures);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('goes on after a restart mid-retry: the next instance retries at the time set, and what queued behind follows in order', async () => {
    const clock = new FakeClock(Date.parse('2026-12-05T09:00:00Z'));
    // The deployment's database outlives the instances; its keeper delivers nothing unless told.
    const keeper = await createTestApp(LOOPBACK, { clock });
    try {
      const { key, secret } = await deploy(keeper);
      const flag = await createFlag(keeper, key, { key: 'restart', type: 'number', value: 0 });
      await keeper.app.get(Outbox).deliverDue();
      receiver.clear();

      const a = await createTestApp(LOOPBACK, { clock, sameDatabaseAs: keeper });
      receiver.respond = () => 500;
      for (const value of [1, 2, 3]) await api(a, key).patch(`/flags/${flag.id}`).send({ type: 'number', value }).expect(200);
      expect(await a.app.get(Outbox).deliverDue()).toEqual([expect.objectContaining({ outcome: 'retry' })]);
      await a.close();

      receiver.respond = () => 200;
      const b = await createTestApp(LOOPBACK, { clock, sameDatabaseAs: keeper });
      try {
        // Not before its retry is due...
        expect(await b.app.get(Outbox).deliverDue()).toEqual([]);
        clock.advance(FIRST_RETRY);
        for (let round = 0; round < 5; round++) await b.app.get(Outbox).deliverDue();
        expect(acceptedValues()).toEqual([1, 2, 3]);
        expect(receiver.received.map((delivery) => delivery.answered)).toEqual([500, 200, 200, 200]);
        expectInOrderOnce(receiver.received, secret);
      } finally {
        await b.close();
      }
    } finally {
      await keeper.close();
    }
  });

  it('sends again, with the same webhook-id, what an instance that died mid-send never recorded, once its lease has run out', async () => {
    const clock = new FakeClock(Date.parse('2026-12-06T09:00:00Z'));
    const keeper = await createTestApp(LOOPBACK, { clock });
    try {
      const { key, secret } = await deploy(keeper);
      const flag = await createFlag(keeper, key, { key: 'lease', type: 'number', value: 0 });
      await keeper.app.get(Outbox).deliverDue();
      receiver.clear();

      const a = await createTestApp(LOOPBACK, { clock, sameDatabaseAs: keeper });
      // A's attempt is answered only after A is gone.
      receiver.respond = () => ({ status: 200, delayMs: 3_000 });
      await api(a, key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 1 }).expect(200);
      await api(a, key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 2 }).expect(200);
      const dying = a.app
        .get(Outbox)
        .deliverDue()
        .catch(() => undefined);
      // A is gone while the receiver holds its request.
      await eventually(async () => receiver.inFlight > 0, { what: "A's attempt at the receiver" });
      await a.close();
      await dying;
      receiver.respond = () => 200;

      const b = await createTestApp(LOOPBACK, { clock, sameDatabaseAs: keeper });
      try {
        await receiver.waitFor(1);
        expect(await b.app.get(Outbox).deliverDue()).toEqual([]);
        clock.advance(PAST_LEASE);
        for (let round = 0; round < 5; round++) await b.app.get(Outbox).deliverDue();
        const ids = receiver.received.map((delivery) => delivery.id);
        expect(acceptedValues()).toEqual([1, 1, 2]);
        expect(ids[0]).toBe(ids[1]);
        expect(ids[2]).not.toBe(ids[1]);
        expect(receiver.received.every((delivery) => verifyStandardWebhook(secret, delivery, Number(delivery.timestamp)))).toBe(true);
      } finally {
        await b.close();
      }
    } finally {
      await keeper.close();
    }
  });
});
