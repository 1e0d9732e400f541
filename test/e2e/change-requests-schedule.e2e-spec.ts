import { ChangeRequestScheduler } from '../../src/change-requests/change-request-scheduler';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { FakeClock } from '../support/fake-clock';
import { createTestApp, TestApp } from '../support/test-app';

const HOUR = 60 * 60 * 1000;
const state = (value: unknown, extra: object = {}) => ({
  name: 'XP',
  description: null,
  type: 'number',
  value,
  runtime: 'shared',
  archived: false,
  ...extra,
});

/**
 * `applyAt` (decisions.md, "Change requests (turn 5)"): an approved request applies at its time, as `system`, exactly
 * once across instances; refused then, it fails with the reason. Every instance reads a FakeClock and the test runs the
 * scheduler's tick after moving it, so nothing waits for real time.
 */
describe('scheduled change requests', () => {
  const clock = new FakeClock(Date.parse('2026-12-04T12:00:00Z'));
  let t: TestApp;
  let org: TestOrganization;
  let author: SignedIn;
  let reviewer: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    org = await createOrganization(t);
    author = await memberSignedIn(t, org.id, 'editor');
    reviewer = await memberSignedIn(t, org.id, 'editor');
  });

  const inHours = (hours: number) => new Date(clock.now() + hours * HOUR).toISOString();
  const tick = (app: TestApp = t) => app.app.get(ChangeRequestScheduler).tick();
  const open = async (body: object) =>
    (
      await asSession(t, author, org.id)
        .post('/change-requests')
        .send({ title: 'Weekend', ...body })
        .expect(201)
    ).body;
  const approve = (id: string) => asSession(t, reviewer, org.id).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' }).expect(201);
  const read = async (id: string) => (await api(t, org.key).get(`/change-requests/${id}`).expect(200)).body;

  it('applies an approved request at applyAt as system, naming the request in the audit entry', async () => {
    const flag = await createFlag(t, org.key, { key: 'xp', name: 'XP', type: 'number', value: 1 });
    const applyAt = inHours(1);
    const cr = await open({ changes: [{ key: 'xp', after: state(2) }], applyAt });
    expect(cr.applyAt).toBe(applyAt);
    await approve(cr.id);
    await tick();
    expect((await read(cr.id)).state).toBe('approved'); // not yet
    clock.advance(2 * HOUR);
    await tick();
    const applied = await read(cr.id);
    expect(applied).toMatchObject({ state: 'applied', appliedAt: clock.date().toISOString() });
    expect(applied.timeline.at(-1)).toMatchObject({ kind: 'applied', actor: { type: 'system', id: null, name: null } });
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body.value).toBe(2);
    const [entry] = (await api(t, org.key).get(`/flags/audit?flagId=${flag.id}`).expect(200)).body.results;
    expect(entry).toMatchObject({ actorType: 'system', actorId: null, context: { changeRequestId: cr.id } });
  });

  it('an open request waits past its time; approved after it, it applies at once', async () => {
    const cr = await open({ changes: [{ key: 'late', after: state(1) }], applyAt: inHours(1) });
    clock.advance(2 * HOUR);
    await tick();
    expect((await read(cr.id)).state).toBe('open');
    await approve(cr.id);
    await tick();
    expect((await read(cr.id)).state).toBe('applied');
  });

  it('a refused scheduled apply fails the request with the reason, and writes nothing', async () => {
    const flag = await createFlag(t, org.key, { key: 'xp', name: 'XP', type: 'number', value: 1 });
    const cr = await open({ changes: [{ key: 'xp', after: state(2) }], applyAt: inHours(1) });
    await approve(cr.id);
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 5 }).expect(200);
    clock.advance(2 * HOUR);
    await tick();
    const failed = await read(cr.id);
    expect(failed).toMatchObject({ state: 'failed', failureReason: expect.stringMatching(/CHANGE_REQUEST_STALE.*xp \(value\)/) });
    expect(failed.timeline.at(-1)).toMatchObject({ kind: 'failed', actor: { type: 'system' }, reason: failed.failureReason });
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body.value).toBe(5);
  });

  it('refuses an applyAt in the past or more than a year ahead, naming it; PATCH sets and clears it', async () => {
    for (const applyAt of [new Date(clock.now() - HOUR).toISOString(), inHours(367 * 24), 'tomorrow']) {
      const response = await asSession(t, author, org.id)
        .post('/change-requests')
        .send({ title: 'T', changes: [{ key: 'k', after: state(1) }], applyAt });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/applyAt/);
    }
    const cr = await open({ changes: [{ key: 'k', after: state(1) }] });
    const later = inHours(3);
    expect((await asSession(t, author, org.id).patch(`/change-requests/${cr.id}`).send({ applyAt: later }).expect(200)).body.applyAt).toBe(later);
    expect((await asSession(t, author, org.id).patch(`/change-requests/${cr.id}`).send({ applyAt: null }).expect(200)).body.applyAt).toBeNull();
  });

  it('survives a restart: an instance started after the time learns of the due request from the database and applies it on its first tick', async () => {
    const cr = await open({ changes: [{ key: 'after-restart', after: state(1) }], applyAt: inHours(1) });
    await approve(cr.id);
    clock.advance(2 * HOUR);
    const fresh = await createTestApp({}, { sameDatabaseAs: t, clock });
    try {
      await tick(fresh);
      expect(await read(cr.id)).toMatchObject({ state: 'applied' });
    } finally {
      await fresh.close();
    }
  });

  it('applies each due request exactly once when two instances race for them', async () => {
    const second = await createTestApp({}, { sameDatabaseAs: t, clock });
    try {
      await subscribe(t, org.id); // room past the free allowance for ten new flags
      const ids: string[] = [];
      for (let index = 0; index < 10; index += 1) {
        const cr = await open({ changes: [{ key: `race-${index}`, after: state(index) }], applyAt: inHours(1) });
        await approve(cr.id);
        ids.push(cr.id);
      }
      clock.advance(2 * HOUR);
      const [first, other] = await Promise.all([t.app.get(ChangeRequestScheduler).runDue(), second.app.get(ChangeRequestScheduler).runDue()]);
      expect(first.length + other.length).toBe(10);
      expect(new Set([...first, ...other].map((outcome) => outcome.id)).size).toBe(10);
      for (const id of ids) expect(await read(id)).toMatchObject({ state: 'applied', failureReason: null });
      const { rows } = await t.db.query(
        `SELECT flag_key, count(*)::int AS entries FROM flag_audit_entries WHERE organization_id = $1 AND actor_type = 'system' GROUP BY flag_key`,
        [org.id],
      );
      expect(rows).toHaveLength(10);
      for (const row of rows) expect(row.entries).toBe(1);
    } finally {
      await second.close();
    }
  });
});
