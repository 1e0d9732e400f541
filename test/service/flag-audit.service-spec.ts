import { AuditActor } from '../../src/audit/audit-entry';
import { AuditRepository } from '../../src/audit/audit.repository';
import { DomainError } from '../../src/common/domain-error';
import { Sql } from '../../src/database/sql';
import { AuditQueryDto, FeatureFlagAuditEntryDto } from '../../src/flags/dto/flag-audit.dto';
import { UpdateFlagDto } from '../../src/flags/dto/flag-input.dto';
import { FlagAction } from '../../src/flags/flag.model';
import { FlagsRepository } from '../../src/flags/flags.repository';
import { FlagsService } from '../../src/flags/flags.service';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { refusal } from '../support/refusal';
import { flagWrites } from '../factories/flag-writes';
import { createServiceContext, ServiceTestContext } from '../support/service-module';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const KEY_A = '6a2f5e0c-5f6e-4c1b-9d55-000000000001';
const KEY_B = '6a2f5e0c-5f6e-4c1b-9d55-000000000002';

type Snapshot = { name: string; description: string | null; type: string; value: unknown; runtime: string; archived: boolean };

/**
 * Restoring a flag from its audit log, and the log's filters and export (README "Live operations"), as
 * services on a real database. HTTP's part (status codes, query validation, NDJSON and CSV framing) stays in
 * flag-restore, flag-audit and flag-audit-filters e2e specs.
 */
describe('restore and audit log rules (services on a real database)', () => {
  let s: ServiceTestContext;
  let flags: FlagsService;
  let organizations: OrganizationsService;
  let audit: AuditRepository;
  let sql: Sql;
  const restorer: AuditActor = { actorType: 'apiKey', actorId: KEY_B };
  const editor: AuditActor = { actorType: 'apiKey', actorId: KEY_A };

  beforeAll(async () => {
    s = await createServiceContext();
    flags = s.get(FlagsService);
    organizations = s.get(OrganizationsService);
    audit = s.get(AuditRepository);
    sql = s.get(Sql);
  });
  afterAll(() => s.close());

  const newOrganization = async () => (await organizations.createOrganization({ name: 'Audit Studio' })).id;
  const { create, update, remove } = flagWrites(() => s, editor, { type: 'number', value: 1 });
  const { restore } = flagWrites(() => s, restorer, { type: 'number', value: 1 });
  /** The flag's entries, oldest first. */
  const entries = async (organizationId: string, flagId?: string) =>
    (await audit.list(sql, organizationId, { flagId, offset: 0, limit: 1000 })).entries.reverse();
  /** Every batch an export reads, in order. */
  const batchesOf = async <T>(batches: AsyncIterable<T[]>) => {
    const read: T[][] = [];
    for await (const batch of batches) read.push(batch);
    return read;
  };
  /** What proves nothing was written: the row version, updated_at to the microsecond, and the organization's entries. */
  const version = async (organizationId: string, flagId: string) =>
    (
      await s.db.query(
        `SELECT (SELECT xmin::text || updated_at::text FROM flags WHERE id = $2) AS flag,
                (SELECT count(*)::int FROM flag_audit_entries WHERE organization_id = $1) AS entries`,
        [organizationId, flagId],
      )
    ).rows[0];

  describe('restore: which entries restore', () => {
    let own: string;
    let flagId: string;
    const entryOf: Record<string, string> = {};

    beforeAll(async () => {
      own = await newOrganization();
      const other = await newOrganization();
      const flag = await create(own, { key: 'mine' });
      flagId = flag.id;
      await update(own, flag.id, { type: 'number', value: 2 });
      const [created, valueSet] = await entries(own, flag.id);
      entryOf.creation = created.id;
      entryOf.valueSet = valueSet.id;
      const sibling = await create(own, { key: 'sibling', type: 'string', value: 'sibling secret' });
      entryOf.sibling = (await entries(own, sibling.id))[0].id;
      const theirs = await create(other, { key: 'theirs', type: 'string', value: 'their secret' });
      entryOf.otherOrganization = (await entries(other, theirs.id))[0].id;
      const gone = await create(own, { key: 'gone' });
      await remove(own, gone.id);
      entryOf.deletion = (await entries(own)).at(-1)!.id;
      // An entry of this very flag without an after state: what a deletion records, had it kept its flag id.
      const { rows } = await s.db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after)
         VALUES ($1, $2, 'mine', 'apiKey', $3, 'flag.delete', $4::jsonb, NULL) RETURNING id`,
        [own, flag.id, KEY_A, JSON.stringify(created.after)],
      );
      entryOf.noAfterState = rows[0].id;
      entryOf.none = UNKNOWN;
    });

    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.message}` : `unexpected ${String(error)}`),
      );

    it.each([
      ["another flag's", 'sibling'],
      ["another organization's", 'otherOrganization'],
      ['a deletion', 'deletion'],
      ['one of this flag without an after state', 'noAfterState'],
      ['none', 'none'],
    ])('%s is AUDIT_ENTRY_NOT_RESTORABLE, says nothing of it, and writes nothing', async (_label, entry) => {
      const before = await version(own, flagId);
      const answer = await outcome(restore(own, flagId, entryOf[entry]));
      // The same words whatever the entry is; only the id the caller sent differs.
      expect(answer).toBe(
        `AUDIT_ENTRY_NOT_RESTORABLE: auditEntryId ${entryOf[entry]} is not an entry of this flag with an after state (a deletion has none)`,
      );
      expect(await version(own, flagId)).toEqual(before);
    });

    it.each([
      ['its creation', 'creation', 1],
      ['its value change', 'valueSet', 2],
    ])("%s restores the flag to that entry's after state", async (_label, entry, value) => {
      await update(own, flagId, { type: 'number', value: 99, name: 'renamed' });
      await expect(restore(own, flagId, entryOf[entry])).resolves.toMatchObject({ id: flagId, key: 'mine', name: 'mine', value, archived: false });
    });

    it.each<[string, () => [string, string]]>([
      ['a flag of another organization, with its own entry', () => [UNKNOWN, flagId]],
      ['an unknown flag', () => [own, UNKNOWN]],
    ])('%s is FLAG_NOT_FOUND', async (_label, target) => {
      const [organizationId, flag] = target();
      const before = await version(own, flagId);
      await expect(refusal(restore(organizationId, flag, entryOf.creation))).resolves.toBe('FLAG_NOT_FOUND');
      expect(await version(own, flagId)).toEqual(before);
    });
  });

  describe("restore is an ordinary edit by its caller: PATCH's labels, rules and no-op", () => {
    const created: Snapshot = { name: 'lives', description: null, type: 'number', value: 3, runtime: 'shared', archived: false };

    it.each<[string, FlagAction, UpdateFlagDto[]]>([
      ['after a rename', FlagAction.UPDATE, [{ name: 'renamed', description: 'why' }]],
      ['after a value change', FlagAction.VALUE_SET, [{ type: 'string', value: 'three' }]],
      ['after a runtime, value and name change', FlagAction.RUNTIME_SET, [{ runtime: 'server', type: 'json', value: { lives: 3 }, name: 'x' }]],
      ['after an archive', FlagAction.UNARCHIVE, [{ archived: true }]],
      ['after a value change and an archive (restored in one edit)', FlagAction.VALUE_SET, [{ type: 'number', value: 4 }, { archived: true }]],
    ])("%s: %s, recorded as the caller, every field set to the entry's after", async (_label, action, edits) => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'lives', type: 'number', value: 3 });
      for (const edit of edits) await update(organizationId, flag.id, edit);
      const [creation] = await entries(organizationId, flag.id);
      await restore(organizationId, flag.id, creation.id);
      const latest = (await entries(organizationId, flag.id)).at(-1)!;
      expect({ action: latest.action, actorType: latest.actorType, actorId: latest.actorId, after: latest.after }).toEqual({
        action,
        ...restorer,
        after: created,
      });
      expect(await flags.get(organizationId, flag.id)).toMatchObject(created);
    });

    it('writes nothing when the flag is already in that state (no row version, no entry)', async () => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'lives', type: 'json', value: { a: 1, b: 2 } });
      await update(organizationId, flag.id, { type: 'json', value: { a: 2 } });
      await update(organizationId, flag.id, { type: 'json', value: { b: 2, a: 1 } }); // the created value, keys reordered
      const [creation] = await entries(organizationId, flag.id);
      const before = await version(organizationId, flag.id);
      await expect(restore(organizationId, flag.id, creation.id)).resolves.toMatchObject({ value: { a: 1, b: 2 }, updatedAt: expect.any(String) });
      expect(await version(organizationId, flag.id)).toEqual(before);
    });

    it('a locked flag refuses a restore that changes its value, and takes one that only restores it from the archive', async () => {
      const organizationId = await newOrganization();
      const subscription = await organizations.createSubscription(organizationId, { plan: 'pro' });
      for (let i = 0; i < 5; i += 1) await create(organizationId, { key: `older-${i}` });
      // The newest of six: past the free allowance once the subscription ends.
      const flag = await create(organizationId, { key: 'target', type: 'number', value: 1 });
      await update(organizationId, flag.id, { type: 'number', value: 2 });
      const [creation, valueSet] = await entries(organizationId, flag.id);
      await organizations.cancelSubscription(organizationId, subscription.id);
      expect((await flags.get(organizationId, flag.id)).locked).toBe(true);

      const before = await version(organizationId, flag.id);
      await expect(refusal(restore(organizationId, flag.id, creation.id))).resolves.toBe('FLAG_LOCKED');
      expect(await version(organizationId, flag.id)).toEqual(before);

      await update(organizationId, flag.id, { archived: true });
      await expect(refusal(restore(organizationId, flag.id, valueSet.id))).resolves.toBe('accepted');
      expect((await entries(organizationId, flag.id)).at(-1)).toMatchObject({ action: FlagAction.UNARCHIVE, ...restorer });
    });

    it('an archived flag refuses a restore that keeps it archived with another value (ARCHIVED_FLAG_VALUE)', async () => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'target', type: 'number', value: 1 });
      await update(organizationId, flag.id, { archived: true });
      const archivedAtOne = (await entries(organizationId, flag.id)).at(-1)!;
      await update(organizationId, flag.id, { archived: false, type: 'number', value: 2 });
      await update(organizationId, flag.id, { archived: true });
      const before = await version(organizationId, flag.id);
      await expect(refusal(restore(organizationId, flag.id, archivedAtOne.id))).resolves.toBe('ARCHIVED_FLAG_VALUE');
      expect(await version(organizationId, flag.id)).toEqual(before);
    });
  });

  describe('audit filters: each one given narrows the log; from inclusive, to exclusive; newest first', () => {
    let organizationId: string;
    const id: Record<string, string> = {};
    /** Entries as the log writes them, at the given instants (microseconds matter at the edges of a range). */
    const fixture: Array<[name: string, flag: 'xp' | 'sale', action: string, actorId: string | null, createdAt: string]> = [
      ['a', 'xp', 'flag.create', KEY_A, '2026-12-01T10:00:00.000000Z'],
      ['b', 'xp', 'flag.update', KEY_A, '2026-12-02T09:59:59.999999Z'],
      ['c', 'xp', 'flag.value.set', KEY_B, '2026-12-02T10:00:00.000000Z'],
      ['d', 'xp', 'flag.value.set', null, '2026-12-03T18:00:00.000000Z'],
      ['e', 'sale', 'flag.create', KEY_B, '2026-12-03T19:00:00.000000Z'],
      ['f', 'sale', 'flag.archive', null, '2026-12-04T00:00:00.000000Z'],
      ['g', 'sale', 'flag.unarchive', KEY_A, '2026-12-05T09:30:00.000000Z'],
      ['h', 'xp', 'flag.runtime.set', KEY_A, '2026-12-06T11:59:59.999500Z'],
      ['i', 'xp', 'flag.delete', KEY_B, '2026-12-06T12:00:00.000000Z'],
    ];
    const flagIds: Record<string, string> = {};

    beforeAll(async () => {
      organizationId = await newOrganization();
      const other = await newOrganization();
      // Flags without entries of their own (the repository writes no audit entry), so the log is the fixture alone.
      for (const key of ['xp', 'sale']) {
        const flag = await s.get(FlagsRepository).insert(sql, organizationId, {
          key,
          name: key,
          description: null,
          type: 'number',
          value: 1,
          runtime: 'shared',
          archived: false,
        });
        flagIds[key] = flag!.id;
      }
      for (const [name, flag, action, actorId, createdAt] of fixture) {
        for (const organization of [organizationId, other]) {
          // The deletion keeps its key and loses its flag id; another organization's copy has the same keys and actors.
          const flagId = organization === organizationId && action !== 'flag.delete' ? flagIds[flag] : null;
          const { rows } = await s.db.query(
            `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, NULL, $7::jsonb, $8) RETURNING id`,
            [organization, flagId, flag, actorId ? 'apiKey' : 'system', actorId, action, action === 'flag.delete' ? null : '{"value": 1}', createdAt],
          );
          if (organization === organizationId) id[name] = rows[0].id;
        }
      }
    });

    const query = (filters: Partial<AuditQueryDto>): AuditQueryDto => ({ page: 1, limit: 100, ...filters }) as AuditQueryDto;
    const names = (results: FeatureFlagAuditEntryDto[]) => results.map((entry) => Object.keys(id).find((name) => id[name] === entry.id) ?? entry.id);

    it.each<[string, string, () => Partial<AuditQueryDto>]>([
      ['no filter', 'ihgfedcba', () => ({})],
      ['action', 'dc', () => ({ action: FlagAction.VALUE_SET })],
      ['actorType system', 'fd', () => ({ actorType: 'system' })],
      ['actorType apiKey', 'ihgecba', () => ({ actorType: 'apiKey' })],
      ['actorType session (none)', '', () => ({ actorType: 'session' })],
      ['actorId', 'iec', () => ({ actorId: KEY_B })],
      ['flagKey (the deletion too)', 'ihdcba', () => ({ flagKey: 'xp' })],
      ['flagId (not the deletion, whose flag id is gone)', 'hdcba', () => ({ flagId: flagIds.xp })],
      ['an unknown flagKey', '', () => ({ flagKey: 'none' })],
      ['from, inclusive (a microsecond before it is out)', 'ihgfedc', () => ({ from: '2026-12-02T10:00:00Z' })],
      ['to, exclusive (half a millisecond before it is in)', 'hgfedcba', () => ({ to: '2026-12-06T12:00:00Z' })],
      ['from and to', 'fed', () => ({ from: '2026-12-03T18:00:00Z', to: '2026-12-05T09:30:00Z' })],
      ['from and to a millisecond apart', 'h', () => ({ from: '2026-12-06T11:59:59.999Z', to: '2026-12-06T12:00:00Z' })],
      ['flagKey, actorType and from', 'ihc', () => ({ flagKey: 'xp', actorType: 'apiKey', from: '2026-12-02T10:00:00Z' })],
      ['action and actorId', 'c', () => ({ action: FlagAction.VALUE_SET, actorId: KEY_B })],
      ['action and actorType that exclude each other', '', () => ({ action: FlagAction.CREATE, actorType: 'system' })],
    ])('%s: [%s]', async (_label, expected, filters) => {
      const page = await flags.history(organizationId, query(filters()));
      expect(names(page.results).join('')).toBe(expected);
      expect(page.total).toBe(expected.length);
    });

    it('pages a filtered log, newest first, with the total of all pages', async () => {
      const page = await flags.history(organizationId, query({ flagKey: 'xp', limit: 2, page: 2 }));
      expect({ names: names(page.results).join(''), total: page.total, page: page.page, totalPages: page.totalPages }).toEqual({
        names: 'dc',
        total: 6,
        page: 2,
        totalPages: 3,
      });
    });

    it.each([
      ['from equal to to', '2026-12-05T00:00:00Z', '2026-12-05T00:00:00Z'],
      ['from after to', '2026-12-05T00:00:00.001Z', '2026-12-05T00:00:00Z'],
    ])('refuses %s, on the page and the export', async (_label, from, to) => {
      await expect(flags.history(organizationId, query({ from, to }))).rejects.toThrow('from must be before to');
      await expect((async () => batchesOf(flags.exportHistory(organizationId, { from, to })))()).rejects.toThrow('from must be before to');
    });
  });

  describe('export: every matching entry, oldest first, in keyset batches read one after the other', () => {
    it('reads batches of 200, the last one short and none empty, matching the page entry for entry', async () => {
      const organizationId = await newOrganization();
      // 400 of one key, then 50 of another; many share a timestamp, so batches meet in the middle of ties.
      await s.db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, before, after, created_at)
         SELECT $1, CASE WHEN n <= 400 THEN 'bulk' ELSE 'tail' END, 'system', NULL, 'flag.value.set', NULL,
                jsonb_build_object('value', n), timestamptz '2026-12-01T00:00:00Z' + (n / 7) * interval '1 millisecond'
         FROM generate_series(1, 450) AS n`,
        [organizationId],
      );
      const everything = (await audit.list(sql, organizationId, { offset: 0, limit: 1000 })).entries.reverse().map(FeatureFlagAuditEntryDto.from);

      const all = await batchesOf(flags.exportHistory(organizationId, {}));
      expect(all.map((batch) => batch.length)).toEqual([200, 200, 50]);
      expect(all.flat()).toEqual(everything);
      // A filter that leaves exactly two batches' worth ends without an empty third.
      const bulk = await batchesOf(flags.exportHistory(organizationId, { flagKey: 'bulk' }));
      expect(bulk.map((batch) => batch.length)).toEqual([200, 200]);
      expect(bulk.flat()).toEqual(everything.filter((entry) => entry.flagKey === 'bulk'));
      expect((await batchesOf(flags.exportHistory(organizationId, { flagKey: 'tail' }))).map((batch) => batch.length)).toEqual([50]);
      expect(await batchesOf(flags.exportHistory(organizationId, { flagKey: 'none' }))).toEqual([]);
    });

    it('resumes on the stored timestamp, not its millisecond: entries a microsecond apart, or tied, each once and in order', async () => {
      const organizationId = await newOrganization();
      const instants = [
        '2026-12-01T00:00:00.000100Z',
        '2026-12-01T00:00:00.000100Z',
        '2026-12-01T00:00:00.000200Z',
        '2026-12-01T00:00:00.000300Z',
        '2026-12-01T00:00:00.000300Z',
        '2026-12-01T00:00:00.000300Z',
        '2026-12-01T00:00:00.000999Z',
        '2026-12-01T00:00:00.001000Z',
        '2026-12-01T00:00:00.001001Z',
        '2026-12-01T00:00:00.001001Z',
      ];
      const written: Array<{ id: string; at: string }> = [];
      for (const at of instants.reverse()) {
        const { rows } = await s.db.query(
          `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, after, created_at)
           VALUES ($1, 'tick', 'system', NULL, 'flag.update', '{}'::jsonb, $2) RETURNING id`,
          [organizationId, at],
        );
        written.push({ id: rows[0].id, at });
      }
      // Oldest first; ties by id (uuids compare as their hex text does).
      const expected = [...written].sort((x, y) => (x.at === y.at ? (x.id < y.id ? -1 : 1) : x.at < y.at ? -1 : 1)).map((entry) => entry.id);

      const batches = await batchesOf(audit.batches(sql, organizationId, {}, 3));
      expect(batches.map((batch) => batch.length)).toEqual([3, 3, 3, 1]);
      expect(batches.flat().map((entry) => entry.id)).toEqual(expected);
    });

    it('takes entries appended while it reads, after the others (as they sort)', async () => {
      const organizationId = await newOrganization();
      await s.db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, after, created_at)
         SELECT $1, 'k', 'system', NULL, 'flag.update', '{}'::jsonb, timestamptz '2026-12-01T00:00:00Z' + n * interval '1 second'
         FROM generate_series(1, 5) AS n`,
        [organizationId],
      );
      const read: string[] = [];
      let appended: string | undefined;
      for await (const batch of audit.batches(sql, organizationId, {}, 2)) {
        read.push(...batch.map((entry) => entry.id));
        if (!appended) {
          const { rows } = await s.db.query(
            `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, after, created_at)
             VALUES ($1, 'k', 'system', NULL, 'flag.update', '{}'::jsonb, '2026-12-02T00:00:00Z') RETURNING id`,
            [organizationId],
          );
          appended = rows[0].id as string;
        }
      }
      expect(read).toHaveLength(6);
      expect(new Set(read).size).toBe(6);
      expect(read.at(-1)).toBe(appended);
    });
  });
});
