import { AuditActor } from '../../src/audit/audit-entry';
import { AuditRepository } from '../../src/audit/audit.repository';
import { CLOCK } from '../../src/common/clock';
import { DomainError } from '../../src/common/domain-error';
import { Sql } from '../../src/database/sql';
import { Transactions } from '../../src/database/transactions';
import { UpdateFlagDto } from '../../src/flags/dto/flag-input.dto';
import { FeatureFlagDto } from '../../src/flags/dto/flag.dto';
import { FlagsService } from '../../src/flags/flags.service';
import { CreateFlagScheduleDto, FlagScheduleDto } from '../../src/flags/schedules/dto/flag-schedule.dto';
import { MAX_PENDING_SCHEDULES_PER_FLAG, MAX_SCHEDULE_AHEAD_MS } from '../../src/flags/schedules/flag-schedule';
import { FlagScheduler } from '../../src/flags/schedules/flag-scheduler';
import { FlagSchedulesRepository } from '../../src/flags/schedules/flag-schedules.repository';
import { FlagSchedulesService } from '../../src/flags/schedules/flag-schedules.service';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { FakeClock } from '../support/fake-clock';
import { refusal } from '../support/refusal';
import { flagWrites } from '../factories/flag-writes';
import { ConfiguredServiceTestContext, createServiceContextWith } from '../support/service-module';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/**
 * Scheduled changes (README "Live operations") as services on a real database. The app's CLOCK is a FakeClock:
 * a schedule falls due when a test moves it, and the test then runs the scheduler's tick itself (runDue), as
 * every instance does four times a second. The clock only moves forward, a few hours per test; schedules a
 * test leaves pending lie far enough ahead never to fall due in a later one.
 */
describe('flag schedule rules (services on a real database)', () => {
  const clock = new FakeClock(Date.parse('2026-12-04T12:00:00Z'));
  let s: ConfiguredServiceTestContext;
  let schedules: FlagSchedulesService;
  let repository: FlagSchedulesRepository;
  let scheduler: FlagScheduler;
  let flags: FlagsService;
  let organizations: OrganizationsService;
  const actor: AuditActor = { actorType: 'apiKey', actorId: 'key-of-the-test' };

  beforeAll(async () => {
    // The scheduler warns of every schedule that fails; here they fail on purpose, and the rows say so.
    const warn = console.warn;
    jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      if ((args[0] as { msg?: string } | undefined)?.msg !== 'scheduled change failed') warn(...args);
    });
    s = await createServiceContextWith({ overrides: [{ provide: CLOCK, useValue: clock }] });
    schedules = s.get(FlagSchedulesService);
    repository = s.get(FlagSchedulesRepository);
    scheduler = s.get(FlagScheduler);
    flags = s.get(FlagsService);
    organizations = s.get(OrganizationsService);
  });
  afterAll(async () => {
    await s.close();
    jest.restoreAllMocks();
  });

  const newOrganization = async () => (await organizations.createOrganization({ name: 'Live Ops Studio' })).id;
  const { create: createFlag, remove: removeFlag } = flagWrites(() => s, actor, { type: 'string', value: 'idle' });
  const schedule = (organizationId: string, flagId: string, inMs: number, change: UpdateFlagDto) =>
    schedules.create(organizationId, flagId, { at: new Date(clock.now() + inMs).toISOString(), change } as CreateFlagScheduleDto);
  /** Moves the clock and runs the tick; a tick already under way (at the old time) is joined first, then one runs at the new time. */
  const advanceAndApply = async (ms: number) => {
    clock.advance(ms);
    await scheduler.runDue();
    await scheduler.runDue();
  };
  const stored = async (scheduleId: string) =>
    (await s.db.query('SELECT state, reason, settled_at FROM flag_schedules WHERE id = $1', [scheduleId])).rows[0] as
      { state: string; reason: string | null; settled_at: Date | null } | undefined;
  const storedCount = async (flagId: string) =>
    (await s.db.query('SELECT count(*)::int AS n FROM flag_schedules WHERE flag_id = $1', [flagId])).rows[0].n as number;
  /** The flag's audit entries, oldest first. */
  const history = async (organizationId: string, flagId: string) =>
    (await s.get(AuditRepository).list(s.get(Sql), organizationId, { flagId, offset: 0, limit: 100 })).entries.reverse();
  /** Pending schedules written as the repository writes them, `at` spread a minute apart from `fromMs` ahead. */
  const seed = (organizationId: string, flagId: string, count: number, state: 'pending' | 'applied' | 'failed', fromMs = 300 * DAY) =>
    s.db.query(
      `INSERT INTO flag_schedules (organization_id, flag_id, at, change, state, reason, settled_at)
       SELECT $1, $2, $3::timestamptz + n * interval '1 minute', '{"name": "seeded"}', $4::text,
              CASE WHEN $4::text = 'failed' THEN 'seeded' END, CASE WHEN $4::text <> 'pending' THEN clock_timestamp() END
       FROM generate_series(1, $5::int) AS n`,
      [organizationId, flagId, new Date(clock.now() + fromMs), state, count],
    );

  describe('making one: `at` in the future, at most a year ahead; a change; a flag of the organization', () => {
    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.message}` : `unexpected ${String(error)}`),
      );

    it.each<[string, number, UpdateFlagDto, RegExp]>([
      ['at a millisecond ago', -1, { name: 'x' }, /^VALIDATION_ERROR: at must be in the future \(it is 20\d\d-.*Z now\)$/],
      ['at the current instant', 0, { name: 'x' }, /^VALIDATION_ERROR: at must be in the future/],
      ['at a millisecond ahead', 1, { name: 'x' }, /^accepted$/],
      ['at exactly the longest ahead (366 days)', MAX_SCHEDULE_AHEAD_MS, { name: 'x' }, /^accepted$/],
      ['at a millisecond past the longest ahead', MAX_SCHEDULE_AHEAD_MS + 1, { name: 'x' }, /^VALIDATION_ERROR: at must be at most one year ahead$/],
      ['an empty change', HOUR, {}, /^VALIDATION_ERROR: change must hold at least one of/],
      [
        'a change whose fields are all undefined',
        HOUR,
        { name: undefined, archived: undefined },
        /^VALIDATION_ERROR: change must hold at least one of/,
      ],
      ['a change of null description only', HOUR, { description: null }, /^accepted$/],
    ])('%s', async (_label, inMs, change, expected) => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'k' });
      const answer = await outcome(schedule(organizationId, flag.id, inMs, change));
      expect(answer).toMatch(expected);
      expect(await storedCount(flag.id)).toBe(answer === 'accepted' ? 1 : 0);
    });

    it('stores only the fields the change sets, as pending, and answers it so', async () => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'k' });
      const made = await schedule(organizationId, flag.id, HOUR, { type: 'string', value: 'live', name: undefined, description: null });
      expect(made).toEqual({
        id: expect.any(String),
        flagId: flag.id,
        at: new Date(clock.now() + HOUR).toISOString(),
        change: { type: 'string', value: 'live', description: null },
        state: 'pending',
        reason: null,
        createdAt: expect.any(String),
        settledAt: null,
      });
      const { rows } = await s.db.query('SELECT organization_id, change FROM flag_schedules WHERE id = $1', [made.id]);
      expect(rows).toEqual([{ organization_id: organizationId, change: { type: 'string', value: 'live', description: null } }]);
    });

    it.each<[string, (own: string, ownFlag: string, theirFlag: string) => [string, string]]>([
      ['a flag of another organization', (own, _ownFlag, theirFlag) => [own, theirFlag]],
      ['its own flag, named from another organization', (_own, ownFlag) => [UNKNOWN, ownFlag]],
      ['an unknown flag', (own) => [own, UNKNOWN]],
    ])('%s is FLAG_NOT_FOUND, and nothing is stored', async (_label, target) => {
      const own = await newOrganization();
      const other = await newOrganization();
      const ownFlag = await createFlag(own, { key: 'k' });
      const theirFlag = await createFlag(other, { key: 'k' });
      const [organizationId, flagId] = target(own, ownFlag.id, theirFlag.id);
      await expect(refusal(schedule(organizationId, flagId, HOUR, { name: 'x' }))).resolves.toBe('FLAG_NOT_FOUND');
      await expect(refusal(schedules.list(organizationId, flagId, { page: 1, limit: 20 }))).resolves.toBe('FLAG_NOT_FOUND');
      expect((await storedCount(ownFlag.id)) + (await storedCount(theirFlag.id))).toBe(0);
    });
  });

  describe(`${MAX_PENDING_SCHEDULES_PER_FLAG} pending schedules per flag; past that TOO_MANY_SCHEDULES`, () => {
    it.each<[string, string, (organizationId: string, flagId: string, siblingId: string) => Promise<unknown>]>([
      ['99 pending', 'accepted', (o, f) => seed(o, f, 99, 'pending')],
      ['100 pending', 'TOO_MANY_SCHEDULES', (o, f) => seed(o, f, 100, 'pending')],
      [
        '99 pending, 30 applied and 30 failed (only pending ones count)',
        'accepted',
        async (o, f) => {
          await seed(o, f, 99, 'pending');
          await seed(o, f, 30, 'applied', -DAY);
          await seed(o, f, 30, 'failed', -DAY);
        },
      ],
      [
        '100 pending on another flag of the organization (each flag counts its own)',
        'accepted',
        (o, _f, sibling) => seed(o, sibling, 100, 'pending'),
      ],
      [
        '100 pending, one of them cancelled',
        'accepted',
        async (o, f) => {
          await seed(o, f, 100, 'pending');
          const { rows } = await s.db.query(`SELECT id FROM flag_schedules WHERE flag_id = $1 LIMIT 1`, [f]);
          await schedules.cancel(o, f, rows[0].id);
        },
      ],
    ])('%s: %s', async (_label, expected, arrange) => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'k' });
      const sibling = await createFlag(organizationId, { key: 'sibling' });
      await arrange(organizationId, flag.id, sibling.id);
      const before = await storedCount(flag.id);
      await expect(refusal(schedule(organizationId, flag.id, HOUR, { name: 'one more' }))).resolves.toBe(expected);
      expect(await storedCount(flag.id)).toBe(expected === 'accepted' ? before + 1 : before);
      // Their flags go, and the seeded schedules fail with them: nothing is left pending for later tests.
      await removeFlag(organizationId, flag.id);
      await removeFlag(organizationId, sibling.id);
    });
  });

  it(`lets creates racing for a flag's last places end at exactly ${MAX_PENDING_SCHEDULES_PER_FLAG} pending`, async () => {
    const organizationId = await newOrganization();
    const flag = await createFlag(organizationId, { key: 'race' });
    await seed(organizationId, flag.id, MAX_PENDING_SCHEDULES_PER_FLAG - 1, 'pending');
    // Every racer gets a pooled connection at once, so that their statements overlap rather than wait for connects.
    const sql = s.get(Sql);
    await Promise.all(Array.from({ length: 16 }, () => sql.rows('SELECT pg_sleep(0.05)')));
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, index) => refusal(schedule(organizationId, flag.id, HOUR + index, { name: `racer ${index}` }))),
    );
    expect(outcomes.filter((outcome) => outcome === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'TOO_MANY_SCHEDULES')).toHaveLength(15);
    expect(await storedCount(flag.id)).toBe(MAX_PENDING_SCHEDULES_PER_FLAG);
    await removeFlag(organizationId, flag.id);
  });

  describe('cancelling: only a pending schedule of that flag in that organization; anything else is SCHEDULE_NOT_FOUND', () => {
    let organizationId: string;
    let flag: FeatureFlagDto;
    let sibling: FeatureFlagDto;
    const made: Record<'pending' | 'applied' | 'failed', FlagScheduleDto> = {} as never;

    beforeAll(async () => {
      organizationId = await newOrganization();
      flag = await createFlag(organizationId, { key: 'event' });
      sibling = await createFlag(organizationId, { key: 'sibling' });
      made.applied = await schedule(organizationId, flag.id, MINUTE, { name: 'applied' });
      made.failed = await schedule(organizationId, flag.id, 2 * MINUTE, { type: 'string', value: 'refused' });
      made.pending = await schedule(organizationId, flag.id, 300 * DAY, { name: 'pending' });
      // Archived in between, so that the value change fails when it falls due.
      await schedule(organizationId, flag.id, MINUTE + 1, { archived: true });
      await advanceAndApply(3 * MINUTE);
      expect((await stored(made.applied.id))?.state).toBe('applied');
      expect((await stored(made.failed.id))?.state).toBe('failed');
    });

    it.each<[string, () => [string, string, string]]>([
      ['an applied one', () => [organizationId, flag.id, made.applied.id]],
      ['a failed one', () => [organizationId, flag.id, made.failed.id]],
      ['a pending one, named with another flag', () => [organizationId, sibling.id, made.pending.id]],
      ['a pending one, from another organization', () => [UNKNOWN, flag.id, made.pending.id]],
      ['an unknown one', () => [organizationId, flag.id, UNKNOWN]],
    ])('%s is refused and stays as it was', async (_label, target) => {
      const [organization, flagId, scheduleId] = target();
      const before = await stored(scheduleId);
      await expect(refusal(schedules.cancel(organization, flagId, scheduleId))).resolves.toBe('SCHEDULE_NOT_FOUND');
      expect(await stored(scheduleId)).toEqual(before);
    });

    it('a pending one is removed (so it never applies), and a second cancel is refused', async () => {
      await expect(refusal(schedules.cancel(organizationId, flag.id, made.pending.id))).resolves.toBe('accepted');
      expect(await stored(made.pending.id)).toBeUndefined();
      await expect(refusal(schedules.cancel(organizationId, flag.id, made.pending.id))).resolves.toBe('SCHEDULE_NOT_FOUND');
      const listed = await schedules.list(organizationId, flag.id, { page: 1, limit: 20 });
      expect(listed.results.map((entry) => entry.id)).not.toContain(made.pending.id);
    });
  });

  describe('a deleted flag', () => {
    it("fails its pending schedules at once, with the reason, and leaves settled ones and other flags' alone", async () => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'gone' });
      const sibling = await createFlag(organizationId, { key: 'stays' });
      const applied = await schedule(organizationId, flag.id, MINUTE, { name: 'applied first' });
      await advanceAndApply(2 * MINUTE);
      const soon = await schedule(organizationId, flag.id, HOUR, { name: 'soon' });
      const later = await schedule(organizationId, flag.id, 200 * DAY, { archived: true });
      const siblings = await schedule(organizationId, sibling.id, 300 * DAY, { name: 'x' });
      const appliedBefore = await stored(applied.id);

      await removeFlag(organizationId, flag.id);
      for (const { id } of [soon, later]) {
        expect(await stored(id)).toEqual({ state: 'failed', reason: 'Flag "gone" was deleted', settled_at: expect.any(Date) });
      }
      expect(await stored(applied.id)).toEqual(appliedBefore);
      expect(await stored(siblings.id)).toMatchObject({ state: 'pending', reason: null, settled_at: null });

      // Their time comes and goes: nothing applies, and the deletion stays the key's last entry.
      await advanceAndApply(2 * HOUR);
      expect(await stored(soon.id)).toMatchObject({ state: 'failed', reason: 'Flag "gone" was deleted' });
      const { rows } = await s.db.query(
        `SELECT action FROM flag_audit_entries WHERE organization_id = $1 AND flag_key = 'gone' ORDER BY created_at DESC LIMIT 1`,
        [organizationId],
      );
      expect(rows).toEqual([{ action: 'flag.delete' }]);
    });

    it('fails nothing when the deletion is refused', async () => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'kept' });
      const pending = await schedule(organizationId, flag.id, 300 * DAY, { name: 'x' });
      await expect(refusal(removeFlag(await newOrganization(), flag.id))).resolves.toBe('FLAG_NOT_FOUND');
      expect(await stored(pending.id)).toMatchObject({ state: 'pending' });
    });
  });

  describe("one flag's due schedules apply in order of at, then of creation, each as the system's own edit", () => {
    it.each<[string, Array<[number, string]>, string[]]>([
      [
        'by at, whatever the order they were made in',
        [
          [2 * HOUR, 'b'],
          [HOUR, 'a'],
          [3 * HOUR, 'c'],
        ],
        ['a', 'b', 'c'],
      ],
      [
        'the same at: in the order they were made',
        [
          [HOUR, 'first'],
          [HOUR, 'second'],
          [HOUR, 'third'],
        ],
        ['first', 'second', 'third'],
      ],
      [
        'by at, then by creation',
        [
          [2 * HOUR, 'x'],
          [HOUR, 'y'],
          [2 * HOUR, 'z'],
          [HOUR, 'w'],
        ],
        ['y', 'w', 'x', 'z'],
      ],
    ])('%s', async (_label, made, applied) => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'event' });
      const ids = [];
      for (const [inMs, value] of made) ids.push((await schedule(organizationId, flag.id, inMs, { type: 'string', value })).id);
      // Listed in the order they will apply, before and after.
      const order = async () => (await schedules.list(organizationId, flag.id, { page: 1, limit: 20 })).results.map((entry) => entry.change.value);
      expect(await order()).toEqual(applied);

      await advanceAndApply(4 * HOUR);
      const entries = (await history(organizationId, flag.id)).slice(1);
      expect(entries.map((entry) => [entry.action, (entry.after as { value: string }).value, entry.actorType, entry.actorId])).toEqual(
        applied.map((value) => ['flag.value.set', value, 'system', null]),
      );
      for (const id of ids) expect(await stored(id)).toEqual({ state: 'applied', reason: null, settled_at: clock.date() });
      expect(await order()).toEqual(applied);
    });

    it('a refused one fails and does not hold back the ones after it', async () => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'event' });
      const value = await schedule(organizationId, flag.id, 2 * HOUR, { type: 'string', value: 'live' });
      const archive = await schedule(organizationId, flag.id, HOUR, { archived: true });
      const restore = await schedule(organizationId, flag.id, 3 * HOUR, { archived: false });
      await advanceAndApply(4 * HOUR);
      expect(await stored(archive.id)).toMatchObject({ state: 'applied' });
      expect(await stored(value.id)).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^Flag "event" is archived/) });
      expect(await stored(restore.id)).toMatchObject({ state: 'applied' });
      expect((await history(organizationId, flag.id)).map((entry) => entry.action)).toEqual(['flag.create', 'flag.archive', 'flag.unarchive']);
      expect(await flags.get(organizationId, flag.id)).toMatchObject({ value: 'idle', archived: false });
    });

    it('a schedule waits while an earlier one of its flag is claimed elsewhere; other flags do not', async () => {
      const organizationId = await newOrganization();
      const flag = await createFlag(organizationId, { key: 'event' });
      const other = await createFlag(organizationId, { key: 'other' });
      const first = await schedule(organizationId, flag.id, HOUR, { type: 'string', value: 'first' });
      const second = await schedule(organizationId, flag.id, HOUR + MINUTE, { type: 'string', value: 'second' });
      const others = await schedule(organizationId, other.id, HOUR + MINUTE, { type: 'string', value: 'other' });

      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let claimed!: (id: string | undefined) => void;
      const claim = new Promise<string | undefined>((resolve) => (claimed = resolve));
      // Another instance, whose clock is ahead, has claimed the first and is slow to apply it; in the end it gives
      // up (its transaction rolls back). This instance's clock catches up only once that claim is held.
      const elsewhere = s.get(Transactions).run(async (tx) => {
        claimed((await repository.claimDue(tx, new Date(clock.now() + 2 * HOUR)))?.id);
        await released;
        throw new Error('the other instance went away');
      });
      expect(await claim).toBe(first.id);

      await advanceAndApply(2 * HOUR);
      expect(await stored(second.id)).toMatchObject({ state: 'pending' });
      expect(await stored(others.id)).toMatchObject({ state: 'applied' });
      expect((await flags.get(organizationId, flag.id)).value).toBe('idle');

      release();
      await expect(elsewhere).rejects.toThrow('the other instance went away');
      await scheduler.runDue();
      await scheduler.runDue();
      expect((await history(organizationId, flag.id)).map((entry) => (entry.after as { value: string }).value)).toEqual(['idle', 'first', 'second']);
    });
  });
});
