import { Permission } from '../../src/auth/permission';
import { FlagScheduler, SCHEDULER_TICK_MS } from '../../src/flags/schedules/flag-scheduler';
import { ChangeFeed } from '../../src/invalidation/change-feed';
import { api, createFlag } from '../factories/flags.factory';
import { admin, createApiKey, createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { createTestApp, TestApp } from '../support/test-app';

const HOUR = 60 * 60 * 1000;

/**
 * Scheduled changes (README, "Live operations"). Every instance here reads a FakeClock: a schedule falls
 * due when a test moves that clock past its `at`, and the test then runs the scheduler's tick (what the clock's
 * timer runs every SCHEDULER_TICK_MS; a FakeClock runs none by itself), so nothing waits for real time.
 */
describe('scheduled flag changes', () => {
  const clock = new FakeClock(Date.parse('2026-12-04T12:00:00Z'));
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    org = await createOrganization(t);
  });

  const inHours = (hours: number) => new Date(clock.now() + hours * HOUR).toISOString();
  /** One tick of the scheduler of `app`, as its timer would run it at the clock's time. */
  const tick = (app: TestApp = t) => app.app.get(FlagScheduler).tick();
  const schedule = (flagId: string, body: object, key = org.key) => api(t, key).post(`/flags/${flagId}/schedules`).send(body);
  const flagOf = async (flagId: string) =>
    (await api(t, org.key).get(`/flags/${flagId}`).expect(200)).body as { value: unknown; name: string; archived: boolean };
  const schedulesOf = async (flagId: string) => (await api(t, org.key).get(`/flags/${flagId}/schedules`).expect(200)).body;
  const auditOf = async (flagId: string) => (await api(t, org.key).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results;
  const stateOf = async (scheduleId: string) =>
    (await t.db.query('SELECT state, reason FROM flag_schedules WHERE id = $1', [scheduleId])).rows[0] as { state: string; reason: string | null };

  describe('making one', () => {
    it('answers 201 with the pending schedule, and lists it', async () => {
      const flag = await createFlag(t, org.key, { key: 'double-xp' });
      const at = inHours(6);
      const created = await schedule(flag.id, { at, change: { type: 'boolean', value: false, name: 'Double XP (off)' } }).expect(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        flagId: flag.id,
        at,
        change: { type: 'boolean', value: false, name: 'Double XP (off)' },
        state: 'pending',
        reason: null,
        createdAt: expect.any(String),
        settledAt: null,
      });
      expect(await schedulesOf(flag.id)).toEqual({ results: [created.body], total: 1, page: 1, totalPages: 1 });
    });

    it('takes an instant in any offset and answers it in UTC, and lists schedules in the order they apply', async () => {
      const flag = await createFlag(t, org.key, { key: 'sale' });
      await schedule(flag.id, { at: '2026-12-05T20:00:00+02:00', change: { archived: true } }).expect(201);
      await schedule(flag.id, { at: '2026-12-05T17:00:00Z', change: { description: 'opens' } }).expect(201);
      const listed = await schedulesOf(flag.id);
      expect(listed.results.map((entry: { at: string }) => entry.at)).toEqual(['2026-12-05T17:00:00.000Z', '2026-12-05T18:00:00.000Z']);
    });

    it.each([
      ['an instant in the past', { at: '2026-12-04T11:59:59Z', change: { name: 'x' } }, /^at must be in the future/],
      ['the current instant', { at: '2026-12-04T12:00:00Z', change: { name: 'x' } }, /^at must be in the future/],
      ['more than a year ahead', { at: '2027-12-06T12:00:00Z', change: { name: 'x' } }, /^at must be at most one year ahead/],
      ['a time without its offset', { at: '2026-12-05T18:00:00', change: { name: 'x' } }, /^at must be an ISO 8601 instant/],
      ['a date that does not exist', { at: '2027-02-30T18:00:00Z', change: { name: 'x' } }, /^at must be an ISO 8601 instant/],
      ['no at', { change: { name: 'x' } }, /^at must be an ISO 8601 instant/],
      ['no change', { at: '2026-12-05T18:00:00Z' }, /^change must be an object/],
      ['a change that is not an object', { at: '2026-12-05T18:00:00Z', change: 'off' }, /^change must be an object/],
      ['an empty change', { at: '2026-12-05T18:00:00Z', change: {} }, /^change must hold at least one/],
      ['a value without its type', { at: '2026-12-05T18:00:00Z', change: { value: false } }, /type and value must be sent together/],
      ['a value not matching its type', { at: '2026-12-05T18:00:00Z', change: { type: 'number', value: 'ten' } }, /^change\.value/],
      ['the key', { at: '2026-12-05T18:00:00Z', change: { key: 'other' } }, /^change\.key cannot be changed/],
      ['an unknown change field', { at: '2026-12-05T18:00:00Z', change: { colour: 'red' } }, /^property change\.colour should not exist/],
      ['an unknown field', { at: '2026-12-05T18:00:00Z', change: { name: 'x' }, repeat: true }, /^property repeat should not exist/],
    ])('refuses %s with 400 naming the field', async (_case, body, message) => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      expectApiError(await schedule(flag.id, body), 400, 'VALIDATION_ERROR', message);
      expect(await schedulesOf(flag.id)).toMatchObject({ total: 0 });
    });

    it('answers 404 for a flag of another organization and 400 for a malformed flagId', async () => {
      const other = await createOrganization(t, 'Other Studio');
      const theirs = await createFlag(t, other.key, { key: 'theirs' });
      expectApiError(await schedule(theirs.id, { at: inHours(1), change: { name: 'x' } }), 404, 'FLAG_NOT_FOUND');
      expectApiError(await api(t, org.key).get(`/flags/${theirs.id}/schedules`), 404, 'FLAG_NOT_FOUND');
      expectApiError(await schedule('not-a-uuid', { at: inHours(1), change: { name: 'x' } }), 400, 'VALIDATION_ERROR', /flagId must be a valid UUID/);
    });

    it('needs FLAGS_WRITE to schedule or cancel and FLAGS_READ to list', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      expectApiError(await schedule(flag.id, { at: inHours(1), change: { name: 'x' } }, reader.key), 403, 'FORBIDDEN');
      const made = await schedule(flag.id, { at: inHours(1), change: { name: 'x' } }, writer.key).expect(201);
      expectApiError(await api(t, writer.key).get(`/flags/${flag.id}/schedules`), 403, 'FORBIDDEN');
      expectApiError(await api(t, reader.key).delete(`/flags/${flag.id}/schedules/${made.body.id}`), 403, 'FORBIDDEN');
      await api(t, reader.key).get(`/flags/${flag.id}/schedules`).expect(200);
    });

    it('allows 100 pending schedules per flag, then answers 409', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      await t.db.query(
        `INSERT INTO flag_schedules (organization_id, flag_id, at, change)
         SELECT $1, $2, $3::timestamptz + n * interval '1 minute', '{"name": "x"}' FROM generate_series(1, 100) AS n`,
        [org.id, flag.id, inHours(1)],
      );
      expectApiError(await schedule(flag.id, { at: inHours(1), change: { name: 'y' } }), 409, 'TOO_MANY_SCHEDULES', /100 pending/);
      // Their flag goes, and they fail with it: they would only keep the scheduler busy in later tests.
      await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    });
  });

  describe('applying', () => {
    it('applies the change within a second of at, audited as system, and the config poll serves it', async () => {
      const flag = await createFlag(t, org.key, { key: 'double-xp', type: 'number', value: 1 });
      const before = await api(t, org.key).get('/flags/config').expect(200);
      const made = await schedule(flag.id, { at: inHours(2), change: { type: 'number', value: 2 } }).expect(201);

      clock.advance(HOUR); // not due yet
      await tick();
      await tick();
      expect((await flagOf(flag.id)).value).toBe(1);

      clock.advance(HOUR);
      // The first tick at or after `at` applies it, and ticks come every SCHEDULER_TICK_MS: within a second.
      await tick();
      await eventually(async () => (await flagOf(flag.id)).value === 2, { timeoutMs: 5_000, intervalMs: 20 });
      expect(SCHEDULER_TICK_MS).toBeLessThan(1_000);

      const [entry] = await auditOf(flag.id);
      expect(entry).toMatchObject({ action: 'flag.value.set', actorType: 'system', actorId: null, before: { value: 1 }, after: { value: 2 } });
      const [settled] = (await schedulesOf(flag.id)).results;
      expect(settled).toMatchObject({ id: made.body.id, state: 'applied', reason: null, settledAt: clock.date().toISOString() });
      const after = await api(t, org.key).get('/flags/config').set('If-None-Match', before.headers.etag).expect(200);
      expect(after.body.flags).toEqual([{ key: 'double-xp', type: 'number', value: 2, runtime: 'shared' }]);
    });

    it("applies one flag's due schedules in the order of at, each with its own audit entry", async () => {
      const flag = await createFlag(t, org.key, { key: 'event', type: 'string', value: 'idle' });
      await schedule(flag.id, { at: inHours(2), change: { type: 'string', value: 'over' } }).expect(201);
      await schedule(flag.id, { at: inHours(1), change: { type: 'string', value: 'live' } }).expect(201);
      await schedule(flag.id, { at: inHours(3), change: { archived: true } }).expect(201);
      clock.advance(4 * HOUR);
      await tick();
      await eventually(async () => (await flagOf(flag.id)).archived === true, { timeoutMs: 5_000 });
      const audit = (await auditOf(flag.id)).reverse();
      expect(audit.map((entry: { action: string; after: { value: string } }) => [entry.action, entry.after.value])).toEqual([
        ['flag.create', 'idle'],
        ['flag.value.set', 'live'],
        ['flag.value.set', 'over'],
        ['flag.archive', 'over'],
      ]);
    });

    it('marks a schedule that changes nothing applied, with no audit entry', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const made = await schedule(flag.id, { at: inHours(1), change: { type: 'boolean', value: true } }).expect(201);
      clock.advance(2 * HOUR);
      await tick();
      await eventually(async () => (await stateOf(made.body.id)).state === 'applied', { timeoutMs: 5_000 });
      expect(await auditOf(flag.id)).toHaveLength(1);
    });

    describe('when the rules refuse the change then, fails it with the reason and changes nothing', () => {
      it('a locked flag (but archiving it still applies)', async () => {
        const subscription = await subscribe(t, org.id);
        const flags = [];
        for (let index = 0; index < 6; index += 1) flags.push(await createFlag(t, org.key, { key: `f${index}` }));
        const locked = flags[5];
        const value = await schedule(locked.id, { at: inHours(1), change: { type: 'boolean', value: false } }).expect(201);
        const archive = await schedule(locked.id, { at: inHours(2), change: { archived: true } }).expect(201);
        await admin(t).delete(`/organizations/${org.id}/subscriptions/${subscription}`).expect(204);
        clock.advance(3 * HOUR);
        await tick();
        await eventually(async () => (await stateOf(archive.body.id)).state !== 'pending', { timeoutMs: 5_000 });
        expect(await stateOf(value.body.id)).toEqual({ state: 'failed', reason: expect.stringMatching(/beyond the plan's limit/) });
        expect(await stateOf(archive.body.id)).toEqual({ state: 'applied', reason: null });
        expect(await flagOf(locked.id)).toMatchObject({ value: true, archived: true, locked: true });
        expect((await auditOf(locked.id)).map((entry: { action: string }) => entry.action)).toEqual(['flag.archive', 'flag.create']);
      });

      it('a value change of a flag archived meanwhile', async () => {
        const flag = await createFlag(t, org.key, { key: 'k' });
        const made = await schedule(flag.id, { at: inHours(1), change: { type: 'boolean', value: false } }).expect(201);
        await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
        clock.advance(2 * HOUR);
        await tick();
        await eventually(async () => (await stateOf(made.body.id)).state !== 'pending', { timeoutMs: 5_000 });
        expect(await stateOf(made.body.id)).toEqual({ state: 'failed', reason: expect.stringMatching(/is archived/) });
        expect(await flagOf(flag.id)).toMatchObject({ value: true, archived: true });
        expect(await auditOf(flag.id)).toHaveLength(2);
      });

      it('a deleted flag: its pending schedules fail at once', async () => {
        const flag = await createFlag(t, org.key, { key: 'gone' });
        const made = await schedule(flag.id, { at: inHours(1), change: { name: 'x' } }).expect(201);
        await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
        expect(await stateOf(made.body.id)).toEqual({ state: 'failed', reason: 'Flag "gone" was deleted' });
        clock.advance(2 * HOUR);
        await tick();
        expect(await stateOf(made.body.id)).toEqual({ state: 'failed', reason: 'Flag "gone" was deleted' });
      });
    });
  });

  describe('cancelling', () => {
    it('removes a pending schedule, which then never applies; a second cancel is 404', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const made = await schedule(flag.id, { at: inHours(1), change: { name: 'Renamed' } }).expect(201);
      await api(t, org.key).delete(`/flags/${flag.id}/schedules/${made.body.id}`).expect(204);
      expect(await schedulesOf(flag.id)).toMatchObject({ results: [], total: 0 });
      expectApiError(await api(t, org.key).delete(`/flags/${flag.id}/schedules/${made.body.id}`), 404, 'SCHEDULE_NOT_FOUND');
      clock.advance(2 * HOUR);
      await tick();
      expect((await flagOf(flag.id)).name).toBe('Flag k');
    });

    it('answers 404 for an applied schedule, one of another flag, and 400 for a malformed id', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const other = await createFlag(t, org.key, { key: 'other' });
      const made = await schedule(flag.id, { at: inHours(1), change: { name: 'Renamed' } }).expect(201);
      expectApiError(await api(t, org.key).delete(`/flags/${other.id}/schedules/${made.body.id}`), 404, 'SCHEDULE_NOT_FOUND');
      clock.advance(2 * HOUR);
      await tick();
      await eventually(async () => (await stateOf(made.body.id)).state === 'applied', { timeoutMs: 5_000 });
      expectApiError(await api(t, org.key).delete(`/flags/${flag.id}/schedules/${made.body.id}`), 404, 'SCHEDULE_NOT_FOUND');
      expectApiError(await api(t, org.key).delete(`/flags/${flag.id}/schedules/nope`), 400, 'VALIDATION_ERROR', /scheduleId must be a valid UUID/);
    });
  });

  describe('with several instances', () => {
    it('applies each due schedule exactly once when two instances race for them', async () => {
      const second = await createTestApp({}, { sameDatabaseAs: t, clock });
      try {
        await subscribe(t, org.id);
        const flags = [];
        for (let index = 0; index < 20; index += 1) {
          const flag = await createFlag(t, org.key, { key: `race-${index}`, type: 'number', value: 0 });
          await schedule(flag.id, { at: inHours(1), change: { type: 'number', value: 1 } }).expect(201);
          await schedule(flag.id, { at: inHours(1), change: { type: 'number', value: 2 } }).expect(201);
          flags.push(flag);
        }
        clock.advance(2 * HOUR);
        // Both instances run at once, as their ticks would.
        const [first, other] = await Promise.all([t.app.get(FlagScheduler).runDue(), second.app.get(FlagScheduler).runDue()]);
        await eventually(
          async () => (await t.db.query(`SELECT 1 FROM flag_schedules WHERE organization_id = $1 AND state = 'pending'`, [org.id])).rowCount === 0,
          { timeoutMs: 10_000 },
        );
        expect(first.length + other.length).toBeLessThanOrEqual(40);
        const { rows } = await t.db.query(
          `SELECT flag_id, count(*)::int AS entries FROM flag_audit_entries WHERE organization_id = $1 AND actor_type = 'system' GROUP BY flag_id`,
          [org.id],
        );
        expect(rows).toHaveLength(20);
        for (const row of rows) expect(row.entries).toBe(2);
        for (const flag of flags) expect((await flagOf(flag.id)).value).toBe(2);
      } finally {
        await second.close();
      }
    });

    it("hears of a schedule made on another instance with its change feed's next read, and applies it when due", async () => {
      // The other instance's clock never moves: it never applies anything itself.
      const second = await createTestApp({}, { sameDatabaseAs: t, clock: new FakeClock(clock.now()) });
      try {
        // Earlier tests' pending schedules would fall due with this one and take it along in the same run.
        await t.db.query(`UPDATE flag_schedules SET state = 'failed', reason = 'set aside by the test', settled_at = now() WHERE state = 'pending'`);
        await t.app.get(FlagScheduler).runDue(); // nothing due: it reads that nothing is pending
        const flag = await createFlag(second, org.key, { key: 'elsewhere', type: 'number', value: 1 });
        const made = await api(second, org.key)
          .post(`/flags/${flag.id}/schedules`)
          .send({ at: inHours(1), change: { type: 'number', value: 2 } })
          .expect(201);
        clock.advance(2 * HOUR);
        await tick();
        expect((await stateOf(made.body.id)).state).toBe('pending'); // nothing read since it was made
        await t.app.get(ChangeFeed).tick();
        await tick();
        expect(await stateOf(made.body.id)).toMatchObject({ state: 'applied' });
        expect((await flagOf(flag.id)).value).toBe(2);
      } finally {
        await second.close();
      }
    });

    it('catches up, in order, on schedules that fell due while every instance was down', async () => {
      // The suite's instance keeps its clock; the one that goes down and the one that comes back read their own.
      const down = new FakeClock(clock.now());
      const first = await createTestApp({}, { sameDatabaseAs: t, clock: down });
      const flag = await createFlag(first, org.key, { key: 'weekend', type: 'string', value: 'normal' });
      await api(first, org.key)
        .post(`/flags/${flag.id}/schedules`)
        .send({ at: inHours(10), change: { type: 'string', value: 'double' } })
        .expect(201);
      await api(first, org.key)
        .post(`/flags/${flag.id}/schedules`)
        .send({ at: inHours(20), change: { type: 'string', value: 'normal again' } })
        .expect(201);
      await first.close();

      const back = new FakeClock(clock.now() + 30 * HOUR);
      const restarted = await createTestApp({}, { sameDatabaseAs: t, clock: back });
      try {
        await tick(restarted); // its first tick
        await eventually(async () => (await flagOf(flag.id)).value === 'normal again', { timeoutMs: 5_000 });
        const audit = (await auditOf(flag.id)).reverse();
        expect(audit.map((entry: { after: { value: string } }) => entry.after.value)).toEqual(['normal', 'double', 'normal again']);
        expect(audit.slice(1).every((entry: { actorType: string }) => entry.actorType === 'system')).toBe(true);
      } finally {
        await restarted.close();
      }
    });
  });
});
