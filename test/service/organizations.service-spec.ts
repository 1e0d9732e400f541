import { createHash } from 'node:crypto';
import { Permission } from '../../src/auth/permission';
import { Sql } from '../../src/database/sql';
import { Transactions } from '../../src/database/transactions';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { OrganizationsRepository } from '../../src/organizations/organizations.repository';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { QuotaService } from '../../src/quota/quota.service';
import { eventually } from '../support/eventually';
import { refusal } from '../support/refusal';
import { ConfiguredServiceTestContext, createServiceContextWith } from '../support/service-module';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
/** Not the built-in default (1 GiB), so that an allocation of this size can only have come from the configuration. */
const DEFAULT_ALLOCATION = 123_456_789;

/**
 * The admin rules (README "Admin API"; decisions on allowances) called as services on a real database: what
 * the admin routes and the CLI share. HTTP (status codes, validation, the admin token) stays in admin.e2e-spec.
 */
describe('organization rules (services on a real database)', () => {
  let s: ConfiguredServiceTestContext;
  let organizations: OrganizationsService;
  let quota: QuotaService;
  let sql: Sql;
  const heardRevoked: string[] = [];

  beforeAll(async () => {
    s = await createServiceContextWith({ env: { STORAGE_DEFAULT_ALLOCATION: String(DEFAULT_ALLOCATION) } });
    organizations = s.get(OrganizationsService);
    quota = s.get(QuotaService);
    sql = s.get(Sql);
    s.get(InvalidationBus).subscribe('apiKey', (keyId) => heardRevoked.push(keyId));
  });
  afterAll(() => s.close());

  const newOrganization = async (name = 'Admin Studio') => (await organizations.createOrganization({ name })).id;
  const newKey = (organizationId: string, permissions = [Permission.FLAGS_READ]) =>
    organizations.createApiKey(organizationId, { name: 'game-server', permissions });
  const keyRow = async (keyId: string) =>
    (await s.db.query('SELECT organization_id, revoked_at FROM api_keys WHERE id = $1', [keyId])).rows[0] as {
      organization_id: string;
      revoked_at: Date | null;
    };
  const subscriptionRow = async (subscriptionId: string) =>
    (await s.db.query('SELECT status, cancelled_at FROM subscriptions WHERE id = $1', [subscriptionId])).rows[0] as {
      status: string;
      cancelled_at: Date | null;
    };

  describe('storage allocation', () => {
    it('gives a new organization STORAGE_DEFAULT_ALLOCATION, as answered and as stored', async () => {
      expect(s.config.storage.defaultAllocationBytes).toBe(DEFAULT_ALLOCATION);
      const created = await organizations.createOrganization({ name: 'Acme' });
      expect(created).toEqual({ id: expect.any(String), name: 'Acme', storageAllocation: DEFAULT_ALLOCATION, createdAt: expect.any(String) });
      const { rows } = await s.db.query('SELECT storage_allocation::float8 AS allocation FROM organizations WHERE id = $1', [created.id]);
      expect(rows).toEqual([{ allocation: DEFAULT_ALLOCATION }]);
    });

    it("changes one organization's allocation and no other's", async () => {
      const changed = await newOrganization();
      const other = await newOrganization();
      await expect(organizations.updateOrganization(changed, { storageAllocation: Number.MAX_SAFE_INTEGER })).resolves.toMatchObject({
        id: changed,
        storageAllocation: Number.MAX_SAFE_INTEGER,
      });
      const { rows } = await s.db.query('SELECT id, storage_allocation::text AS allocation FROM organizations WHERE id = ANY($1)', [
        [changed, other],
      ]);
      expect(Object.fromEntries(rows.map((row) => [row.id, row.allocation]))).toEqual({
        [changed]: String(Number.MAX_SAFE_INTEGER),
        [other]: String(DEFAULT_ALLOCATION),
      });
    });
  });

  describe('an unknown organization is ORGANIZATION_NOT_FOUND, and nothing is stored for it', () => {
    it.each<[string, () => Promise<unknown>]>([
      ['changing its allocation', () => organizations.updateOrganization(UNKNOWN, { storageAllocation: 1 })],
      ['issuing a key', () => newKey(UNKNOWN)],
      ['subscribing', () => organizations.createSubscription(UNKNOWN, { plan: 'pro' })],
      ['cancelling a subscription', () => organizations.cancelSubscription(UNKNOWN, UNKNOWN)],
    ])('%s', async (_label, call) => {
      await expect(refusal(call())).resolves.toBe('ORGANIZATION_NOT_FOUND');
      const { rows } = await s.db.query(
        `SELECT (SELECT count(*)::int FROM organizations WHERE id = $1) + (SELECT count(*)::int FROM api_keys WHERE organization_id = $1)
              + (SELECT count(*)::int FROM subscriptions WHERE organization_id = $1) AS n`,
        [UNKNOWN],
      );
      expect(rows[0].n).toBe(0);
    });
  });

  describe('API keys', () => {
    it('issues a key shown once and stored only as its SHA-256 hash', async () => {
      const organizationId = await newOrganization();
      const issued = await newKey(organizationId, [Permission.FLAGS_READ, Permission.STORAGE_WRITE]);
      expect(issued).toEqual({
        id: expect.any(String),
        name: 'game-server',
        permissions: [Permission.FLAGS_READ, Permission.STORAGE_WRITE],
        key: expect.stringMatching(/^fsk_[A-Za-z0-9_-]{43}$/),
        createdAt: expect.any(String),
      });
      const { rows } = await s.db.query('SELECT key_hash, to_jsonb(api_keys)::text AS "wholeRow" FROM api_keys WHERE id = $1', [issued.id]);
      expect(rows[0].key_hash).toBe(createHash('sha256').update(issued.key).digest('hex'));
      // Neither the key nor any long piece of it is anywhere in the row.
      const secret = issued.key.slice('fsk_'.length);
      for (let start = 0; start + 8 <= secret.length; start += 8) expect(rows[0].wholeRow).not.toContain(secret.slice(start, start + 8));
    });

    it('issues a different key every time, even with the same name and permissions', async () => {
      const organizationId = await newOrganization();
      const keys = await Promise.all([newKey(organizationId), newKey(organizationId), newKey(organizationId)]);
      expect(new Set(keys.map((key) => key.key)).size).toBe(3);
      const { rows } = await s.db.query('SELECT count(DISTINCT key_hash)::int AS n FROM api_keys WHERE organization_id = $1', [organizationId]);
      expect(rows[0].n).toBe(3);
    });

    describe('revoking: only an active key of the organization; anything else is API_KEY_NOT_FOUND and changes nothing', () => {
      it.each<[string, (own: string, ownKey: string, otherKey: string) => [string, string]]>([
        ['its own active key', (own, ownKey) => [own, ownKey]],
        ['a key of another organization', (own, _ownKey, otherKey) => [own, otherKey]],
        ['an unknown key', (own) => [own, UNKNOWN]],
      ])('%s', async (label, target) => {
        const own = await newOrganization();
        const other = await newOrganization('Other Studio');
        const [ownKey, otherKey] = [(await newKey(own)).id, (await newKey(other)).id];
        const [organizationId, keyId] = target(own, ownKey, otherKey);
        heardRevoked.length = 0;
        const outcome = await refusal(organizations.revokeApiKey(organizationId, keyId));
        const revoked = label === 'its own active key';
        expect(outcome).toBe(revoked ? 'accepted' : 'API_KEY_NOT_FOUND');
        expect((await keyRow(ownKey)).revoked_at !== null).toBe(revoked);
        expect((await keyRow(otherKey)).revoked_at).toBeNull();
        // Every instance's key cache is told of a revocation, and only of one.
        expect(heardRevoked).toEqual(revoked ? [ownKey] : []);
      });

      it("a key revoked already: the second revocation is refused and keeps the first one's time", async () => {
        const organizationId = await newOrganization();
        const { id } = await newKey(organizationId);
        await organizations.revokeApiKey(organizationId, id);
        const first = (await keyRow(id)).revoked_at;
        heardRevoked.length = 0;
        await expect(refusal(organizations.revokeApiKey(organizationId, id))).resolves.toBe('API_KEY_NOT_FOUND');
        expect((await keyRow(id)).revoked_at).toEqual(first);
        expect(heardRevoked).toEqual([]);
      });
    });
  });

  describe('subscriptions', () => {
    it('cancels an active subscription of the organization; anything else is SUBSCRIPTION_NOT_FOUND and changes nothing', async () => {
      const own = await newOrganization();
      const other = await newOrganization('Other Studio');
      const ownSubscription = (await organizations.createSubscription(own, { plan: 'pro' })).id;
      const otherSubscription = (await organizations.createSubscription(other, { plan: 'pro' })).id;

      const cases: Array<[string, string, string]> = [
        ["another organization's", otherSubscription, 'SUBSCRIPTION_NOT_FOUND'],
        ['an unknown one', UNKNOWN, 'SUBSCRIPTION_NOT_FOUND'],
        ['its own active one', ownSubscription, 'accepted'],
        ['its own, cancelled already', ownSubscription, 'SUBSCRIPTION_NOT_FOUND'],
      ];
      const outcomes = [];
      for (const [label, subscriptionId] of cases) outcomes.push([label, await refusal(organizations.cancelSubscription(own, subscriptionId))]);
      expect(outcomes).toEqual(cases.map(([label, , outcome]) => [label, outcome]));

      expect(await subscriptionRow(ownSubscription)).toEqual({ status: 'cancelled', cancelled_at: expect.any(Date) });
      expect(await subscriptionRow(otherSubscription)).toEqual({ status: 'active', cancelled_at: null });
    });

    it('moves the flag allowance: 5 without an active subscription, 50 while any is active', async () => {
      const organizationId = await newOrganization();
      const allowance = async () => {
        const { max, subscribed } = await quota.quotaFor(sql, organizationId);
        return { max, subscribed };
      };
      const free = { max: 5, subscribed: false };
      const subscribed = { max: 50, subscribed: true };
      expect(await allowance()).toEqual(free);
      const pro = await organizations.createSubscription(organizationId, { plan: 'pro' });
      expect(await allowance()).toEqual(subscribed);
      const studio = await organizations.createSubscription(organizationId, { plan: 'studio' });
      await organizations.cancelSubscription(organizationId, pro.id);
      expect(await allowance()).toEqual(subscribed);
      await organizations.cancelSubscription(organizationId, studio.id);
      expect(await allowance()).toEqual(free);
      // Another organization's subscription lends it nothing.
      await organizations.createSubscription(await newOrganization('Other Studio'), { plan: 'pro' });
      expect(await allowance()).toEqual(free);
    });

    describe('takes the organization row lock, as flag writes do, so an allowance never moves under one', () => {
      it.each<[string, (organizationId: string, subscriptionId: string) => Promise<unknown>]>([
        ['subscribing', (organizationId) => organizations.createSubscription(organizationId, { plan: 'late' })],
        ['cancelling', (organizationId, subscriptionId) => organizations.cancelSubscription(organizationId, subscriptionId)],
      ])('%s waits for a transaction that holds it', async (_label, change) => {
        const organizationId = await newOrganization();
        const { id: subscriptionId } = await organizations.createSubscription(organizationId, { plan: 'pro' });
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        // A flag write's transaction: the organization row lock, then its own work until released.
        const holder = s.get(Transactions).run(async (tx) => {
          await s.get(OrganizationsRepository).lockOrganization(tx, organizationId);
          locked();
          await released;
          return quota.quotaFor(tx, organizationId);
        });
        await isLocked;

        let settled = false;
        const changing = change(organizationId, subscriptionId).finally(() => (settled = true));
        // The change's transaction is seen waiting for a lock, and has not settled.
        await eventually(
          async () =>
            (await s.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount === 1,
          { what: 'the subscription change waiting for the organization lock' },
        );
        expect(settled).toBe(false);
        release();
        // The write that held the lock read the allowance as it was before the change.
        await expect(holder).resolves.toMatchObject({ max: 50, subscribed: true });
        await changing;
      });
    });
  });
});
