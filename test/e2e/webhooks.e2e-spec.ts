import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { Transactions } from '../../src/database/transactions';
import { Outbox } from '../../src/outbox/outbox';
import { WEBHOOK_RETRY } from '../../src/webhooks/webhook-channel';
import { WebhookEvents } from '../../src/webhooks/webhook-events';
import { WebhookRetention } from '../../src/webhooks/webhook-retention';
import { api, createFlag } from '../factories/flags.factory';
import { bearer, createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn, signIn } from '../factories/people.factory';
import { uploadFile } from '../factories/storage.factory';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { LogCapture } from '../support/log-capture';
import { scrapeMetrics, TEST_METRICS_TOKEN } from '../support/metrics';
import { ReceivedWebhook, verifyStandardWebhook, WebhookReceiver } from '../support/servers/webhook-receiver';
import { createTestApp, TestApp } from '../support/test-app';

/** Loopback receivers need both: the operator's switches for a studio's own network. */
const LOOPBACK = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const HOUR = 3_600_000;
/** A flag's whole state, as an import or a change request names it. */
const state = (value: unknown) => ({ name: 'Flag', description: null, type: typeof value, value, runtime: 'shared', archived: false });

/**
 * Webhooks (decisions.md, "Webhooks (turn 5)") through the HTTP API, against a real receiver on loopback that verifies
 * each delivery with the published Standard Webhooks algorithm. The app runs on a clock the test moves; deliveries go
 * out when the test runs the outbox (what its timer does every 250 ms), so retries 28 hours apart take no time.
 */
describe('webhooks', () => {
  const clock = new FakeClock(Date.parse('2026-12-03T09:00:00Z'));
  const receiver = new WebhookReceiver();
  const log = new LogCapture();
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let owner: SignedIn;
  let editor: SignedIn;
  let otherAdmin: SignedIn;
  /** FLAGS_READ + FLAGS_WRITE, named so events can say who. */
  let deployKey: { key: string; id: string };

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp({ ...LOOPBACK, LOG_LEVEL: 'info', METRICS_TOKEN: TEST_METRICS_TOKEN }, { clock, logDestination: log });
    org = await createOrganization(t, 'Live Ops');
    other = await createOrganization(t, 'Elsewhere');
    await subscribe(t, org.id);
    owner = await memberSignedIn(t, org.id, 'admin');
    editor = await memberSignedIn(t, org.id, 'editor');
    otherAdmin = await memberSignedIn(t, other.id, 'admin');
    const created = await createApiKey(t, org.id, [Permission.FLAGS_READ, Permission.FLAGS_WRITE]);
    deployKey = { key: created.key, id: created.id };
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });
  beforeEach(async () => {
    receiver.clear();
    receiver.respond = () => 200;
    await signInAgain();
  });

  const hooks = (who: SignedIn = owner, organizationId = org.id) => asSession(t, who, organizationId);
  const deliver = () => t.app.get(Outbox).deliverDue();
  /** Runs the outbox until nothing more is due now. */
  const drain = async () => {
    for (let round = 0; round < 50; round++) if ((await deliver()).length === 0) return;
  };
  const nowSeconds = () => Math.floor(clock.now() / 1000);
  let endpoints: string[] = [];
  const createEndpoint = async (body: Record<string, unknown>, organizationId = org.id, who = owner) => {
    const response = await hooks(who, organizationId)
      .post('/organization/webhooks')
      .send({ url: receiver.url(), events: ['flag.changed'], format: 'standard', ...body });
    expect(response.status).toBe(201);
    endpoints.push(response.body.id);
    return response.body as { id: string; secret: string; url: string };
  };
  /** Signs the people in again: tests move the clock by days, past a session's life. */
  const signInAgain = async () => {
    owner = await signIn(t, owner.email);
    editor = await signIn(t, editor.email);
  };
  afterEach(async () => {
    await signInAgain();
    for (const id of endpoints) await hooks().delete(`/organization/webhooks/${id}`).expect(204);
    endpoints = [];
  });
  let keys = 0;
  const newKey = () => `wh-${++keys}`;
  /** Verified as the receiver would have when it arrived (each delivery's timestamp is checked against the clock separately). */
  const verified = (secret: string, delivery: ReceivedWebhook) => verifyStandardWebhook(secret, delivery, Number(delivery.timestamp));

  describe('endpoints', () => {
    it('are made by admins, the secret shown once, and listed without it; never by an editor, a key, an anonymous caller or another organization', async () => {
      const created = await createEndpoint({ description: 'Deploy bot', flagKeys: ['xp-multiplier'] });
      expect(created).toMatchObject({
        url: receiver.url(),
        events: ['flag.changed'],
        format: 'standard',
        flagKeys: ['xp-multiplier'],
        description: 'Deploy bot',
        enabled: true,
        disabledReason: null,
        previousSecretExpiresAt: null,
        lastDelivery: null,
      });
      expect(created.secret).toMatch(SECRET);

      const listed = (await hooks().get('/organization/webhooks').expect(200)).body.results;
      expect(listed).toEqual([expect.objectContaining({ id: created.id, url: receiver.url() })]);
      expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
      expect((await hooks().get(`/organization/webhooks/${created.id}`).expect(200)).body).not.toHaveProperty('secret');

      expect((await hooks(editor).get('/organization/webhooks')).status).toBe(403);
      expect(
        (
          await hooks(editor)
            .post('/organization/webhooks')
            .send({ url: receiver.url(), events: ['flag.changed'], format: 'standard' })
        ).status,
      ).toBe(403);
      expect((await request(t.http).get('/v1/organization/webhooks').set(bearer(org.key))).status).toBe(403);
      expectApiError(await request(t.http).get('/v1/organization/webhooks'), 401, 'UNAUTHORIZED');
      expect((await asSession(t, owner, org.id, { csrf: false }).post('/organization/webhooks').send({})).status).toBe(403);
      // Another organization's admin, in their own organization, finds no such endpoint to read, change or delete.
      for (const answer of [
        await hooks(otherAdmin, other.id).get(`/organization/webhooks/${created.id}`),
        await hooks(otherAdmin, other.id).patch(`/organization/webhooks/${created.id}`).send({ enabled: false }),
        await hooks(otherAdmin, other.id).delete(`/organization/webhooks/${created.id}`),
        await hooks(otherAdmin, other.id).post(`/organization/webhooks/${created.id}/test`),
        await hooks(otherAdmin, other.id).get(`/organization/webhooks/${created.id}/deliveries`),
      ])
        expectApiError(answer, 404, 'WEBHOOK_NOT_FOUND');
      expect((await hooks(otherAdmin, other.id).get('/organization/webhooks').expect(200)).body.results).toEqual([]);
    });

    it('refuse a malformed body with a 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ url: undefined }, /^url /],
        [{ url: 'not a url' }, /^url /],
        [{ url: 'ftp://127.0.0.1/x' }, /^url /],
        [{ url: `https://example.com/${'a'.repeat(2048)}` }, /^url /],
        [{ events: [] }, /^events /],
        [{ events: ['flag.deleted'] }, /^events /],
        [{ events: ['flag.changed', 'flag.changed'] }, /^events /],
        [{ format: 'teams' }, /^format /],
        [{ flagKeys: [] }, /^flagKeys /],
        [{ flagKeys: ['Not A Key!'] }, /^flagKeys /],
        [{ flagKeys: Array.from({ length: 101 }, (_, index) => `k${index}`) }, /^flagKeys /],
        [{ description: 'x'.repeat(501) }, /^description /],
        [{ secret: 'whsec_mine' }, /secret/],
      ];
      for (const [change, message] of cases) {
        const response = await hooks()
          .post('/organization/webhooks')
          .send({ url: receiver.url(), events: ['flag.changed'], format: 'standard', ...change });
        expect({ change, status: response.status }).toEqual({ change, status: 400 });
        expect(response.body.message).toMatch(message);
      }
      expect((await hooks().get('/organization/webhooks').expect(200)).body.results).toEqual([]);

      // A change is held to the same rules; a field left out stays, null clears only what null means (every flag).
      const { id } = await createEndpoint({ flagKeys: ['a'], description: 'kept' });
      const patches: Array<[Record<string, unknown>, RegExp]> = [
        [{ url: null }, /^url /],
        [{ url: 'ftp://127.0.0.1/x' }, /^url /],
        [{ events: null }, /^events /],
        [{ events: [] }, /^events /],
        [{ format: null }, /^format /],
        [{ enabled: 'yes' }, /^enabled /],
        [{ flagKeys: ['Bad Key'] }, /^flagKeys /],
        [{ secret: 'whsec_x' }, /secret/],
      ];
      for (const [change, message] of patches) {
        const response = await hooks().patch(`/organization/webhooks/${id}`).send(change);
        expect({ change, status: response.status }).toEqual({ change, status: 400 });
        expect(response.body.message).toMatch(message);
      }
      const patched = (await hooks().patch(`/organization/webhooks/${id}`).send({ flagKeys: null, format: 'slack' }).expect(200)).body;
      expect(patched).toMatchObject({ flagKeys: null, format: 'slack', description: 'kept', url: receiver.url(), events: ['flag.changed'] });
      expectApiError(await hooks().patch(`/organization/webhooks/not-a-uuid`).send({}), 400, 'VALIDATION_ERROR');
    });

    it('are at most 20 per organization, however many are asked for at once', async () => {
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, index) =>
          hooks()
            .post('/organization/webhooks')
            .send({ url: receiver.url(`/n${index}`), events: ['storage.changed'], format: 'standard' }),
        ),
      );
      const made = answers.filter((answer) => answer.status === 201);
      endpoints.push(...made.map((answer) => answer.body.id));
      expect(made).toHaveLength(20);
      for (const refused of answers.filter((answer) => answer.status !== 201)) expectApiError(refused, 409, 'WEBHOOK_LIMIT');
      expect((await hooks().get('/organization/webhooks').expect(200)).body.results).toHaveLength(20);
    });
  });

  describe('delivery', () => {
    it('sends one signed Standard Webhooks delivery per committed write, with who changed what from what to what', async () => {
      const { secret, id } = await createEndpoint({});
      const flag = await createFlag(t, deployKey.key, { key: newKey(), type: 'number', value: 2 });
      await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 20 }).expect(200);
      await drain();

      expect(receiver.received).toHaveLength(2);
      const [created, changed] = receiver.received;
      for (const delivery of receiver.received) {
        expect(verified(secret, delivery)).toBe(true);
        expect(delivery.id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
        expect(delivery.timestamp).toBe(String(nowSeconds()));
        expect(delivery.headers['content-type']).toMatch(/^application\/json/);
        expect(Object.keys(delivery.body).sort()).toEqual(['data', 'timestamp', 'type']);
      }
      expect(created.id).not.toBe(changed.id);
      expect(changed.body).toEqual({
        type: 'flag.changed',
        timestamp: expect.any(String),
        data: {
          organizationId: org.id,
          changes: [
            {
              flagId: flag.id,
              key: flag.key,
              action: 'flag.value.set',
              before: expect.objectContaining({ value: 2 }),
              after: expect.objectContaining({ value: 20 }),
              context: null,
            },
          ],
          actor: { type: 'apiKey', id: deployKey.id, name: expect.any(String) },
        },
      });
      expect(created.body.data.changes).toEqual([expect.objectContaining({ action: 'flag.create', before: null, key: flag.key })]);

      // Each attempt is listed, newest first, with the answer.
      const deliveries = (await hooks().get(`/organization/webhooks/${id}/deliveries`).expect(200)).body;
      expect(deliveries).toMatchObject({ total: 2, page: 1, totalPages: 1 });
      expectApiError(await hooks().get(`/organization/webhooks/${id}/deliveries?limit=101`), 400, 'VALIDATION_ERROR');
      expectApiError(await hooks().get(`/organization/webhooks/${id}/deliveries?page=0`), 400, 'VALIDATION_ERROR');
      expect(deliveries.results[0]).toEqual({
        eventId: expect.stringMatching(/^msg_/),
        type: 'flag.changed',
        attempt: 1,
        status: 'succeeded',
        responseStatus: 200,
        durationMs: expect.any(Number),
        responseExcerpt: 'ok',
        error: null,
        at: clock.date().toISOString(),
      });
      expect(deliveries.results.map((line: { eventId: string }) => line.eventId).sort()).toEqual([created.id, changed.id].sort());
      expect((await hooks().get(`/organization/webhooks/${id}`).expect(200)).body.lastDelivery).toEqual({
        status: 'succeeded',
        responseStatus: 200,
        at: clock.date().toISOString(),
      });
      // Nothing more is due: a delivered event is not sent again.
      expect(await deliver()).toEqual([]);
    });

    it('writes one event for an import, listing every flag it changed, and none for a write that is rolled back', async () => {
      await createEndpoint({});
      const keysOfImport = [newKey(), newKey(), newKey()];
      await api(t, deployKey.key)
        .post('/flags/import')
        .send({ flags: keysOfImport.map((key) => ({ key, ...state(true) })) })
        .expect(200);
      await drain();
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0].body.data.changes.map((change: { key: string }) => change.key).sort()).toEqual([...keysOfImport].sort());

      // The event is the write's: written in its transaction, gone with its rollback.
      const events = (await t.db.query(`SELECT count(*)::int AS n FROM webhook_events`)).rows[0].n;
      const rows = (await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE channel = 'webhook'`)).rows[0].n;
      await expect(
        t.app.get(Transactions).run(async (tx) => {
          await t.app.get(WebhookEvents).storageChanged(tx, org.id, { ids: ['00000000-0000-4000-8000-000000000000'], change: 'deleted' });
          await t.app.get(WebhookEvents).reviewSettingChanged(tx, org.id, {
            id: '00000000-0000-4000-8000-000000000001',
            organizationId: org.id,
            user: null,
            at: clock.date().toISOString(),
            before: { required: false, approvals: 1, selfApproval: false },
            after: { required: true, approvals: 1, selfApproval: false },
          });
          await createFlagIn(tx);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await t.db.query(`SELECT count(*)::int AS n FROM webhook_events`)).rows[0].n).toBe(events);
      expect((await t.db.query(`SELECT count(*)::int AS n FROM outbox WHERE channel = 'webhook'`)).rows[0].n).toBe(rows);
      await drain();
      expect(receiver.received).toHaveLength(1);
    });

    it('keeps each endpoint in commit order through failures: the next event waits for the one before, whose id stays the same on every retry', async () => {
      const { secret } = await createEndpoint({});
      const flag = await createFlag(t, deployKey.key, { key: newKey(), type: 'number', value: 0 });
      await drain();
      receiver.clear();
      let failures = 3;
      receiver.respond = () => (failures-- > 0 ? { status: 503, body: 'x'.repeat(5000) } : 200);
      for (const value of [1, 2, 3, 4]) await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'number', value }).expect(200);

      // 1st attempt, then 5 s, 5 min, 30 min later: three failures of the first event, nothing of the others meanwhile.
      await deliver();
      for (const wait of WEBHOOK_RETRY.delaysMs.slice(0, 3)) {
        expect(receiver.received.map((delivery) => delivery.body.data.changes[0].after.value)).toEqual(Array(receiver.received.length).fill(1));
        clock.advance(wait * 1.2);
        await drain();
      }
      const values = receiver.accepted.map((delivery) => delivery.body.data.changes[0].after.value);
      expect(values).toEqual([1, 2, 3, 4]);
      expect(new Set(receiver.received.slice(0, 4).map((delivery) => delivery.id)).size).toBe(1);
      expect(receiver.received.every((delivery) => verified(secret, delivery))).toBe(true);
      // The failed attempts are listed with the first 1 KB of what the endpoint said.
      const lines = (await hooks().get(`/organization/webhooks/${endpoints[0]}/deliveries?limit=100`).expect(200)).body.results;
      const failed = lines.filter((line: { status: string }) => line.status === 'failed');
      expect(failed).toHaveLength(3);
      expect(failed[0]).toMatchObject({ responseStatus: 503, responseExcerpt: 'x'.repeat(1024) });
      expect(failed.map((line: { attempt: number }) => line.attempt).sort()).toEqual([1, 2, 3]);
    });

    it('disables an endpoint that answers 410 Gone at once, records later events as skipped, and starts again from new events', async () => {
      const { id } = await createEndpoint({});
      receiver.respond = () => 410;
      const flag = await createFlag(t, deployKey.key, { key: newKey() });
      await drain();
      expect(receiver.received).toHaveLength(1);
      const endpoint = (await hooks().get(`/organization/webhooks/${id}`).expect(200)).body;
      expect(endpoint).toMatchObject({ enabled: false, disabledReason: expect.stringContaining('410 Gone'), disabledAt: clock.date().toISOString() });
      expect((await scrapeMetrics(t)).text).toMatch(/^flagstore_outbox_deliveries_total\{channel="webhook",outcome="failed"\} [1-9]/m);

      receiver.respond = () => 200;
      await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
      await drain();
      expect(receiver.received).toHaveLength(1);
      const lines = (await hooks().get(`/organization/webhooks/${id}/deliveries`).expect(200)).body.results;
      expect(lines.map((line: { status: string }) => line.status).sort()).toEqual(['failed', 'skipped']);
      const skipped = lines.find((line: { status: string }) => line.status === 'skipped');
      expect(skipped).toMatchObject({ attempt: 0, type: 'flag.changed', responseStatus: null, at: clock.date().toISOString() });
      expectApiError(await hooks().post(`/organization/webhooks/${id}/test`), 409, 'WEBHOOK_DISABLED');
      expectApiError(await hooks().post(`/organization/webhooks/${id}/deliveries/${skipped.eventId}/redeliver`), 409, 'WEBHOOK_DISABLED');

      await hooks().patch(`/organization/webhooks/${id}`).send({ enabled: true }).expect(200);
      await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: true }).expect(200);
      await drain();
      expect(receiver.received.map((delivery) => delivery.body.data.changes[0].after.value)).toEqual([true, true]);
      expect(receiver.received[1].id).not.toBe(skipped.eventId);

      // The skipped event can be sent again, with its own id, after what came before.
      await hooks().post(`/organization/webhooks/${id}/deliveries/${skipped.eventId}/redeliver`).expect(202, { eventId: skipped.eventId });
      await drain();
      expect(receiver.received).toHaveLength(3);
      expect(receiver.received[2].id).toBe(skipped.eventId);
      expect(receiver.received[2].body.data.changes[0].after.value).toBe(false);
      expectApiError(
        await hooks().post(`/organization/webhooks/${id}/deliveries/msg_${'A'.repeat(22)}/redeliver`),
        404,
        'WEBHOOK_DELIVERY_NOT_FOUND',
      );
      expectApiError(await hooks().post(`/organization/webhooks/${id}/deliveries/not-an-id/redeliver`), 400, 'VALIDATION_ERROR');
    });

    it('retries on the Standard Webhooks schedule, and after the last failure disables the endpoint and says why', async () => {
      const { id } = await createEndpoint({});
      receiver.respond = () => 500;
      const flag = await createFlag(t, deployKey.key, { key: newKey() });
      await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
      await deliver();
      const attemptTimes = [clock.now()];
      for (const wait of WEBHOOK_RETRY.delaysMs) {
        // Not before its time (jitter is 10%)...
        clock.advance(wait * 0.85);
        await drain();
        expect(receiver.received).toHaveLength(attemptTimes.length);
        // ...and by its time.
        clock.advance(wait * 0.3);
        await drain();
        attemptTimes.push(clock.now());
        expect(receiver.received).toHaveLength(attemptTimes.length);
      }
      expect(receiver.received).toHaveLength(8);
      expect(new Set(receiver.received.map((delivery) => delivery.id)).size).toBe(1);
      await signInAgain();
      const endpoint = (await hooks().get(`/organization/webhooks/${id}`).expect(200)).body;
      expect(endpoint.enabled).toBe(false);
      expect(endpoint.disabledReason).toMatch(/^Disabled after 8 failed attempts over about 28 hours: The endpoint answered 500/);
      // The event queued behind it was never sent: recorded as skipped.
      const lines = (await hooks().get(`/organization/webhooks/${id}/deliveries?limit=100`).expect(200)).body.results;
      expect(lines.filter((line: { status: string }) => line.status === 'skipped')).toHaveLength(1);
      expect(lines.filter((line: { status: string }) => line.status === 'failed')).toHaveLength(8);
      clock.advance(48 * HOUR);
      await drain();
      expect(receiver.received).toHaveLength(8);
    });

    it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
      const { id, secret: first } = await createEndpoint({});
      const rotated = (await hooks().post(`/organization/webhooks/${id}/rotate-secret`).expect(200)).body;
      expect(rotated.secret).toMatch(SECRET);
      expect(rotated.secret).not.toBe(first);
      expect(rotated.previousSecretExpiresAt).toBe(new Date(clock.now() + 24 * HOUR).toISOString());
      expect((await hooks().get(`/organization/webhooks/${id}`).expect(200)).body.previousSecretExpiresAt).toBe(rotated.previousSecretExpiresAt);

      await hooks().post(`/organization/webhooks/${id}/test`).expect(202);
      await drain();
      const during = receiver.received[0];
      expect(during.body).toMatchObject({ type: 'webhook.test', data: { organizationId: org.id, endpointId: id } });
      expect(during.signatures).toHaveLength(2);
      expect(verified(first, during)).toBe(true);
      expect(verified(rotated.secret, during)).toBe(true);
      // A third secret verifies neither signature.
      expect(verified(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, during)).toBe(false);

      clock.advance(24 * HOUR + 1000);
      await signInAgain();
      await hooks().post(`/organization/webhooks/${id}/test`).expect(202);
      await drain();
      const after = receiver.received[1];
      expect(after.signatures).toHaveLength(1);
      expect(verified(rotated.secret, after)).toBe(true);
      expect(verified(first, after)).toBe(false);
      expect((await hooks().get(`/organization/webhooks/${id}`).expect(200)).body.previousSecretExpiresAt).toBeNull();
    });

    it('sends only events about the flag keys an endpoint names, and only the event types it wants', async () => {
      const watched = newKey();
      const ignored = newKey();
      await createEndpoint({ flagKeys: [watched] });
      const storageOnly = await createEndpoint({ url: receiver.url('/storage'), events: ['storage.changed'] });
      await createFlag(t, deployKey.key, { key: ignored });
      await createFlag(t, deployKey.key, { key: watched });
      await api(t, deployKey.key)
        .post('/flags/import')
        .send({ flags: [ignored, watched].map((key) => ({ key, ...state(false) })) })
        .expect(200);
      await drain();
      expect(receiver.received.map((delivery) => delivery.body.data.changes.map((change: { key: string }) => change.key))).toEqual([
        [watched],
        expect.arrayContaining([ignored, watched]),
      ]);
      expect((await hooks().get(`/organization/webhooks/${storageOnly.id}/deliveries`).expect(200)).body.total).toBe(0);
    });

    it('tells a storage change as one event: an upload, a deletion, a purge', async () => {
      const { secret } = await createEndpoint({ events: ['storage.changed'] });
      const first = await uploadFile(t, org, Buffer.from('one'), 'text/plain');
      const second = await uploadFile(t, org, Buffer.from('two'), 'text/plain');
      const third = await uploadFile(t, org, Buffer.from('three'), 'text/plain');
      await api(t, org.key).delete(`/storage/${first.id}`).expect(200);
      await api(t, org.key).delete('/storage/purge').send({}).expect(200);
      await drain();
      expect(receiver.received.map((delivery) => delivery.body.data)).toEqual([
        { ids: [first.id], change: 'uploaded' },
        { ids: [second.id], change: 'uploaded' },
        { ids: [third.id], change: 'uploaded' },
        { ids: [first.id], change: 'deleted' },
        { ids: expect.arrayContaining([second.id, third.id]), change: 'purged' },
      ]);
      expect(receiver.received.every((delivery) => delivery.body.type === 'storage.changed' && verified(secret, delivery))).toBe(true);
    });

    it('tells the review setting and each step of a change request, and the apply as one flag.changed event naming the request', async () => {
      const reviewer = await memberSignedIn(t, org.id, 'editor');
      await createEndpoint({
        events: ['review-setting.changed', 'change-request.opened', 'change-request.approved', 'change-request.applied', 'flag.changed'],
      });
      const flag = await createFlag(t, deployKey.key, { key: newKey(), type: 'number', value: 1 });
      await hooks().put('/organization/review').send({ required: true, approvals: 1, selfApproval: false }).expect(200);
      try {
        const opened = await hooks(editor)
          .post('/change-requests')
          .send({ title: 'Double XP', changes: [{ key: flag.key, after: { ...state(2), name: flag.key } }] });
        expect(opened.status).toBe(201);
        await hooks(reviewer).post(`/change-requests/${opened.body.id}/reviews`).send({ decision: 'approve', comment: 'ok' }).expect(201);
        await hooks(editor).post(`/change-requests/${opened.body.id}/apply`).send({}).expect(200);
        await drain();
        const types = receiver.received.map((delivery) => delivery.body.type);
        expect(types).toEqual([
          'flag.changed',
          'review-setting.changed',
          'change-request.opened',
          'change-request.approved',
          // One transaction: the request applied, and its flags changed.
          'change-request.applied',
          'flag.changed',
        ]);
        const [, setting, open, approved, done, applied] = receiver.received.map((delivery) => delivery.body.data);
        expect(setting).toMatchObject({ organizationId: org.id, before: { required: false }, after: { required: true, approvals: 1 } });
        expect(open).toMatchObject({ id: opened.body.id, title: 'Double XP', state: 'open', flagKeys: [flag.key] });
        expect(open.url).toBe(`${t.config.urls.publicUrl}/console/change-requests/${opened.body.id}?org=${org.id}`);
        expect(approved).toMatchObject({ state: 'approved', comment: 'ok', actor: { type: 'session', id: reviewer.userId } });
        expect(applied.changes).toEqual([expect.objectContaining({ key: flag.key, context: { changeRequestId: opened.body.id } })]);
        expect(done).toMatchObject({ state: 'applied', id: opened.body.id });
      } finally {
        await hooks().put('/organization/review').send({ required: false, approvals: 1, selfApproval: false }).expect(200);
      }
    });

    it('writes the chat formats as a person would read them: who changed which flag where, from what to what, with a link', async () => {
      await createEndpoint({ url: receiver.url('/slack'), format: 'slack' });
      await createEndpoint({ url: receiver.url('/discord'), format: 'discord' });
      const flag = await createFlag(t, deployKey.key, { key: newKey(), type: 'number', value: 2 });
      await drain();
      receiver.clear();
      await hooks(editor).patch(`/flags/${flag.id}`).send({ type: 'number', value: 20 }).expect(200);
      await drain();
      const slack = receiver.received.find((delivery) => delivery.url === '/slack')!;
      const discord = receiver.received.find((delivery) => delivery.url === '/discord')!;
      const link = `${t.config.urls.publicUrl}/console/flags/${flag.id}?org=${org.id}`;
      expect(Object.keys(slack.body).sort()).toEqual(['blocks', 'text']);
      expect(slack.body.text).toContain(editor.body.user.name);
      expect(slack.body.text).toContain(flag.key);
      expect(slack.body.text).toContain('Live Ops');
      expect(slack.body.text).toMatch(/2.*→.*20/);
      expect(JSON.stringify(slack.body.blocks)).toContain(link);
      expect(discord.body).toMatchObject({ allowed_mentions: { parse: [] }, embeds: [expect.objectContaining({ url: expect.any(String) })] });
      const discordText = JSON.stringify(discord.body);
      for (const words of [editor.body.user.name, flag.key, 'Live Ops', link]) expect(discordText).toContain(words);
      // Chat formats are signed too: a relay can check them.
      expect(slack.signatures).toHaveLength(1);
    });

    it('lists deliveries for 7 days, then forgets them with their events, keeping what still waits to be sent', async () => {
      const { id } = await createEndpoint({});
      const flag = await createFlag(t, deployKey.key, { key: newKey() });
      await drain();
      const [line] = (await hooks().get(`/organization/webhooks/${id}/deliveries`).expect(200)).body.results;
      clock.advance(6 * 24 * HOUR);
      await signInAgain();
      receiver.respond = () => 500;
      await api(t, deployKey.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(200);
      await drain();
      clock.advance(24 * HOUR + 60_000);
      await signInAgain();

      expect(await t.app.get(WebhookRetention).purge()).toBeGreaterThan(0);
      const lines = (await hooks().get(`/organization/webhooks/${id}/deliveries`).expect(200)).body.results;
      // The first event's delivery and attempt are gone; the second's attempt (1 day old) and its pending retry stay.
      expect(lines.map((entry: { eventId: string }) => entry.eventId)).not.toContain(line.eventId);
      expect(lines.map((entry: { status: string }) => entry.status).sort()).toEqual(['failed', 'pending']);
      expect((await t.db.query(`SELECT 1 FROM webhook_events WHERE id = $1`, [line.eventId])).rowCount).toBe(0);
      expectApiError(await hooks().post(`/organization/webhooks/${id}/deliveries/${line.eventId}/redeliver`), 404, 'WEBHOOK_DELIVERY_NOT_FOUND');
    });

    it('keeps secrets, and the URL’s user info and query, out of the logs', async () => {
      const { secret, id } = await createEndpoint({ url: `http://robot:hunter2@127.0.0.1:${receiver.port}/hook?token=sesame` });
      receiver.respond = () => 500;
      log.lines.length = 0;
      await createFlag(t, deployKey.key, { key: newKey() });
      await drain();
      expect(receiver.received[0].url).toBe('/hook?token=sesame');
      expect(receiver.received[0].headers.authorization).toBe(`Basic ${Buffer.from('robot:hunter2').toString('base64')}`);
      await hooks().post(`/organization/webhooks/${id}/rotate-secret`).expect(200);
      const text = JSON.stringify(log.lines);
      expect(log.lines.length).toBeGreaterThan(0);
      for (const hidden of [secret, secret.slice(6), 'hunter2', 'sesame']) expect(text).not.toContain(hidden);
    });
  });

  /** A flag created in the caller's transaction through the one write path. */
  async function createFlagIn(tx: import('../../src/database/sql').Transaction) {
    const { FlagWriter } = await import('../../src/flags/flag-writer');
    const { FlagsService } = await import('../../src/flags/flags.service');
    return t.app
      .get(FlagWriter)
      .record(tx, { actorType: 'apiKey', actorId: deployKey.id }, (inner) =>
        t.app.get(FlagsService).create(inner, org.id, { key: newKey(), name: 'rolled back', type: 'boolean', value: true } as never),
      );
  }
});

/** The safety rules on an instance with the operator's defaults: https only, no private addresses. */
describe('webhook URLs on the defaults', () => {
  let t: TestApp;
  let org: TestOrganization;
  let owner: SignedIn;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp();
    org = await createOrganization(t, 'Careful');
    owner = await memberSignedIn(t, org.id, 'admin');
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('refuses http, and any address that is loopback, private, link-local or metadata, with the reason', async () => {
    const cases: Array<[string, RegExp]> = [
      [receiver.url(), /^url must use https/],
      ['https://127.0.0.1/hook', /^url .*loopback/],
      ['https://localhost/hook', /^url .*loopback/],
      ['https://[::1]/hook', /^url .*loopback/],
      ['https://2130706433/hook', /^url .*loopback/],
      ['https://10.1.2.3/hook', /^url .*private/],
      ['https://192.168.0.10/hook', /^url .*private/],
      ['https://169.254.169.254/latest/meta-data', /^url .*metadata/],
      ['https://[fd00::1]/hook', /^url .*unique-local/],
    ];
    for (const [url, message] of cases) {
      const response = await asSession(t, owner, org.id)
        .post('/organization/webhooks')
        .send({ url, events: ['flag.changed'], format: 'standard' });
      expect({ url, status: response.status }).toEqual({ url, status: 400 });
      expect(response.body.message).toMatch(message);
    }
  });
});
