import { Controller, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AuditActor } from '../../src/audit/audit-entry';
import { AuditRepository } from '../../src/audit/audit.repository';
import { RequirePermission } from '../../src/auth/auth.decorators';
import { Sql } from '../../src/database/sql';
import { UpdateFlagDto } from '../../src/flags/dto/flag-input.dto';
import { FeatureFlagDto } from '../../src/flags/dto/flag.dto';
import { FlagAction } from '../../src/flags/flag.model';
import { FlagWriteRoutesCheck } from '../../src/flags/flag-write.interceptor';
import { FlagsService } from '../../src/flags/flags.service';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { Permission } from '../../src/auth/permission';
import { flagWrites } from '../factories/flag-writes';
import { refusal } from '../support/refusal';
import { createServiceContext, ServiceTestContext } from '../support/service-module';

/**
 * The flag rules (allowance, locking, archived values, audit labels) called as services, with a real
 * PostgreSQL and no HTTP: each table below is a rule as the product states it.
 */
describe('flag rules (services on a real database)', () => {
  let s: ServiceTestContext;
  let flags: FlagsService;
  let organizations: OrganizationsService;
  let audit: AuditRepository;
  let sql: Sql;
  const actor: AuditActor = { actorType: 'system', actorId: null };

  beforeAll(async () => {
    s = await createServiceContext();
    flags = s.get(FlagsService);
    organizations = s.get(OrganizationsService);
    audit = s.get(AuditRepository);
    sql = s.get(Sql);
  });
  afterAll(() => s.close());

  const newOrganization = async () => (await organizations.createOrganization({ name: 'Rules Studio' })).id;
  const { create, update, remove } = flagWrites(() => s, actor, { type: 'boolean', value: true });
  const entries = async (organizationId: string) => (await audit.list(sql, organizationId, { offset: 0, limit: 100 })).entries.reverse();

  describe('allowance: 5 flags without a subscription, 50 with any active one; archived flags count', () => {
    it.each([
      ['no subscription', 0, 5],
      ['one active subscription', 1, 50],
      ['two active subscriptions', 2, 50],
    ])('%s (%i) allows %i flags', async (_label, subscriptions, allowance) => {
      const organizationId = await newOrganization();
      for (let i = 0; i < subscriptions; i += 1) await organizations.createSubscription(organizationId, { plan: `plan-${i}` });
      for (let i = 0; i < allowance; i += 1) await create(organizationId, { key: `f${i}` });
      await expect(refusal(create(organizationId, { key: 'one-too-many' }))).resolves.toBe('ALLOWANCE_REACHED');
      const page = await flags.list(organizationId, { page: 1, limit: 1, includeArchived: true });
      expect(page.quota).toEqual({ max: allowance, used: allowance, subscribed: subscriptions > 0, locked: 0 });
    });

    it('counts archived flags, and a deletion frees a slot', async () => {
      const organizationId = await newOrganization();
      const created: FeatureFlagDto[] = [];
      for (let i = 0; i < 5; i += 1) created.push(await create(organizationId, { key: `f${i}` }));
      await update(organizationId, created[0].id, { archived: true });
      await expect(refusal(create(organizationId, { key: 'extra' }))).resolves.toBe('ALLOWANCE_REACHED');
      await remove(organizationId, created[0].id);
      await expect(refusal(create(organizationId, { key: 'extra' }))).resolves.toBe('accepted');
    });
  });

  describe('locking: past the allowance the newest flags lock; a locked flag only archives, restores and deletes', () => {
    let organizationId: string;
    let locked: FeatureFlagDto;

    beforeEach(async () => {
      organizationId = await newOrganization();
      const subscription = await organizations.createSubscription(organizationId, { plan: 'pro' });
      const created: FeatureFlagDto[] = [];
      for (let i = 0; i < 7; i += 1) created.push(await create(organizationId, { key: `f${i}`, type: 'number', value: i }));
      await organizations.cancelSubscription(organizationId, subscription.id);
      const page = await flags.list(organizationId, { page: 1, limit: 100, includeArchived: true });
      // Ranked by creation time: the two created last are past the free allowance of 5.
      expect(
        page.results
          .filter((flag) => flag.locked)
          .map((flag) => flag.key)
          .sort(),
      ).toEqual(['f5', 'f6']);
      expect(page.quota).toEqual({ max: 5, used: 7, subscribed: false, locked: 2 });
      locked = created[6];
    });

    it.each<[string, UpdateFlagDto, string]>([
      ['name', { name: 'renamed' }, 'FLAG_LOCKED'],
      ['description', { description: 'why' }, 'FLAG_LOCKED'],
      ['value', { type: 'number', value: 99 }, 'FLAG_LOCKED'],
      ['runtime', { runtime: 'server' }, 'FLAG_LOCKED'],
      ['archive', { archived: true }, 'accepted'],
      ['the unchanged value', { type: 'number', value: 6 }, 'accepted'],
    ])('%s: %j -> %s', async (_label, dto, outcome) => {
      await expect(refusal(update(organizationId, locked.id, dto))).resolves.toBe(outcome);
    });

    it('restores and deletes a locked flag, and refusals write no audit entry', async () => {
      const before = (await entries(organizationId)).length;
      await expect(refusal(update(organizationId, locked.id, { name: 'nope' }))).resolves.toBe('FLAG_LOCKED');
      expect(await entries(organizationId)).toHaveLength(before);
      await update(organizationId, locked.id, { archived: true });
      await expect(refusal(update(organizationId, locked.id, { archived: false }))).resolves.toBe('accepted');
      await expect(refusal(remove(organizationId, locked.id))).resolves.toBe('accepted');
      expect((await entries(organizationId)).slice(before).map((entry) => entry.action)).toEqual([
        FlagAction.ARCHIVE,
        FlagAction.UNARCHIVE,
        FlagAction.DELETE,
      ]);
    });
  });

  describe('archived flags: the value changes only in the edit that restores the flag', () => {
    it.each<[UpdateFlagDto, string]>([
      [{ type: 'boolean', value: false }, 'ARCHIVED_FLAG_VALUE'],
      [{ type: 'boolean', value: true }, 'accepted'],
      [{ type: 'boolean', value: false, archived: false }, 'accepted'],
      [{ name: 'renamed' }, 'accepted'],
    ])('%j -> %s', async (dto, outcome) => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'archived' });
      await update(organizationId, flag.id, { archived: true });
      await expect(refusal(update(organizationId, flag.id, dto))).resolves.toBe(outcome);
    });
  });

  describe('audit labels: one entry per change, labelled by the field that outranks the others', () => {
    it.each<[string, UpdateFlagDto, FlagAction | null]>([
      ['name', { name: 'renamed' }, FlagAction.UPDATE],
      ['description', { description: 'notes' }, FlagAction.UPDATE],
      ['value', { type: 'json', value: { lives: 4 } }, FlagAction.VALUE_SET],
      ['type and value', { type: 'string', value: 'four' }, FlagAction.VALUE_SET],
      ['runtime', { runtime: 'server' }, FlagAction.RUNTIME_SET],
      ['archive', { archived: true }, FlagAction.ARCHIVE],
      ['runtime over value, archive and name', { runtime: 'server', type: 'number', value: 1, archived: true, name: 'x' }, FlagAction.RUNTIME_SET],
      ['value over archive and name', { type: 'number', value: 1, archived: true, name: 'x' }, FlagAction.VALUE_SET],
      ['archive over name', { archived: true, name: 'x' }, FlagAction.ARCHIVE],
      ['nothing (same value, keys reordered)', { type: 'json', value: { b: 2, lives: 3 } }, null],
      ['nothing (empty edit)', {}, null],
    ])('%s', async (_label, dto, action) => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'lives', type: 'json', value: { lives: 3, b: 2 } });
      const stored = async () => (await s.db.query('SELECT updated_at, xmin FROM flags WHERE id = $1', [flag.id])).rows[0];
      const before = await stored();
      await update(organizationId, flag.id, dto);
      const log = await entries(organizationId);
      expect(log.map((entry) => entry.action)).toEqual(action ? [FlagAction.CREATE, action] : [FlagAction.CREATE]);
      // A change that changes nothing is not written either.
      if (!action) expect(await stored()).toEqual(before);
      for (const entry of log) expect({ actorType: entry.actorType, actorId: entry.actorId }).toEqual(actor);
    });

    it('records the states before and after, and a deletion without a flag id but with its key', async () => {
      const organizationId = await newOrganization();
      const flag = await create(organizationId, { key: 'hp', type: 'number', value: 100 });
      await update(organizationId, flag.id, { type: 'number', value: 120 });
      await remove(organizationId, flag.id);
      const state = { name: 'hp', description: null, type: 'number', runtime: 'shared', archived: false };
      expect(
        (await entries(organizationId)).map(({ action, flagId, flagKey, before, after }) => ({ action, flagId, flagKey, before, after })),
      ).toEqual([
        { action: FlagAction.CREATE, flagId: null, flagKey: 'hp', before: null, after: { ...state, value: 100 } },
        { action: FlagAction.VALUE_SET, flagId: null, flagKey: 'hp', before: { ...state, value: 100 }, after: { ...state, value: 120 } },
        { action: FlagAction.DELETE, flagId: null, flagKey: 'hp', before: { ...state, value: 120 }, after: null },
      ]);
    });

    it('writes the change and its entry together: a refused write leaves neither', async () => {
      const organizationId = await newOrganization();
      await create(organizationId, { key: 'taken' });
      await expect(refusal(create(organizationId, { key: 'taken' }))).resolves.toBe('FLAG_KEY_TAKEN');
      expect(await entries(organizationId)).toHaveLength(1);
      const { rows } = await s.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [organizationId]);
      expect(rows[0].n).toBe(1);
    });
  });
});

describe('audited flag routes are checked at boot', () => {
  @Controller('rogue')
  class RogueController {
    @Post()
    @RequirePermission(Permission.FLAGS_WRITE)
    write(): void {}
  }

  it('refuses to start an app with a FLAGS_WRITE route that is not an audited flag write', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [(await import('@nestjs/core')).DiscoveryModule],
      controllers: [RogueController],
      providers: [FlagWriteRoutesCheck],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(/FLAGS_WRITE must be @AuditedFlagWrite\(\).*RogueController\.write/);
  });
});
