import { Transaction } from '../../src/database/sql';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { PurgeDto } from '../../src/storage/items/dto/purge.dto';
import { StorageItem } from '../../src/storage/items/storage-item';
import { StorageKind } from '../../src/storage/items/storage-kind';
import { StorageAllocation } from '../../src/storage/items/storage-allocation';
import { StorageService } from '../../src/storage/items/storage.service';
import { SignedUrlQueryDto } from '../../src/storage/signed-urls/dto/signed-url.dto';
import { storageItems } from '../factories/storage-items';
import { refusal } from '../support/refusal';
import { createServiceContext, ServiceTestContext } from '../support/service-module';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const MINUTE = 60 * 1000;

/**
 * The storage API's rules (README "Storage") as StorageService on a real database, with the default
 * configuration: the allocation is only reported (enforcement is storage-allocation.service-spec's), statistics
 * count complete files only, and delete and purge reach only the caller's organization. HTTP's part (validation
 * of queries and bodies, error shapes, the CDN) stays in storage-api.e2e-spec.
 */
describe('storage rules (services on a real database)', () => {
  let s: ServiceTestContext;
  let storage: StorageService;
  let organizations: OrganizationsService;
  let items: ReturnType<typeof storageItems>;

  beforeAll(async () => {
    s = await createServiceContext();
    storage = s.get(StorageService);
    organizations = s.get(OrganizationsService);
    items = storageItems(s);
  });
  afterAll(() => s.close());

  const newOrganization = async (storageAllocation?: number) => {
    const { id } = await organizations.createOrganization({ name: 'Storage Studio' });
    if (storageAllocation !== undefined) await organizations.updateOrganization(id, { storageAllocation });
    return id;
  };
  const ids = async (organizationId: string) =>
    (await s.db.query('SELECT id FROM storage_items WHERE organization_id = $1 ORDER BY id', [organizationId])).rows.map((row) => row.id as string);

  describe('without STORAGE_ENFORCE_ALLOCATION (the default) the allocation is only reported', () => {
    it('grants reservations and takes files past it, and statistics report the overage', async () => {
      const allocation = s.get(StorageAllocation);
      expect(allocation.enforced).toBe(false);
      const organizationId = await newOrganization(100);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          refusal(storage.createSignedUrl(organizationId, { contentType: 'image/png', size: 73 } as SignedUrlQueryDto)),
        ),
      );
      expect(answers).toEqual(Array(5).fill('accepted'));
      // The non-allocated upload's commit: written at once, whatever the size, in a transaction of its own (where its
      // webhook event is written), without the allocation's lock.
      const ran: boolean[] = [];
      await allocation.withinAllocation(organizationId, 500, async (tx) => {
        ran.push(tx instanceof Transaction);
        await items.complete(organizationId, 500, 'image/png', { bytes: false });
      });
      expect(ran).toEqual([true]);
      expect(await allocation.usageNow(organizationId)).toBeNull();
      expect(await storage.statistics(organizationId)).toMatchObject({ totalStorage: 100, usedStorage: 500, overageStorage: 400 });
      expect(await ids(organizationId)).toHaveLength(6);
    });
  });

  describe('statistics: complete files only, every kind listed, overage = max(0, used - allocation)', () => {
    it("counts complete files per kind, and neither pending items nor another organization's files", async () => {
      const organizationId = await newOrganization(10_000);
      await items.complete(organizationId, 300, 'image/png', { bytes: false });
      await items.complete(organizationId, 200, 'image/jpeg', { bytes: false });
      await items.complete(organizationId, 500, 'application/pdf', { bytes: false });
      await items.pending(organizationId, 7_000, 15 * MINUTE, 'video/mp4');
      await items.complete(await newOrganization(), 900, 'audio/mpeg', { bytes: false });
      expect(await storage.statistics(organizationId)).toEqual({
        totalStorage: 10_000,
        usedStorage: 1000,
        overageStorage: 0,
        breakdown: [
          { kind: StorageKind.IMAGE, count: 2, size: 500 },
          { kind: StorageKind.VIDEO, count: 0, size: 0 },
          { kind: StorageKind.AUDIO, count: 0, size: 0 },
          { kind: StorageKind.DOCUMENT, count: 1, size: 500 },
        ],
      });
    });

    it.each([
      [1000, 600, 0],
      [600, 600, 0],
      [599, 600, 1],
      [0, 600, 600],
    ])('allocation %i, %i bytes used: overage %i', async (allocation, used, overage) => {
      const organizationId = await newOrganization(allocation);
      await items.complete(organizationId, used, 'video/mp4', { bytes: false });
      expect(await storage.statistics(organizationId)).toMatchObject({ totalStorage: allocation, usedStorage: used, overageStorage: overage });
    });

    it('says the organization is gone (NOT_FOUND) when it no longer exists', async () => {
      await expect(refusal(storage.statistics(UNKNOWN))).resolves.toBe('NOT_FOUND');
    });
  });

  describe("delete: the caller's organization's item, complete or pending; anything else is NOT_FOUND", () => {
    let own: string;
    let other: string;
    let theirs: StorageItem;

    beforeAll(async () => {
      own = await newOrganization();
      other = await newOrganization();
      theirs = await items.complete(other, 42);
    });

    it.each<[string, () => Promise<StorageItem>]>([
      ['a complete file: its row and its bytes go', () => items.complete(own, 64)],
      ['a pending item: its row goes', () => items.pending(own, 64, 15 * MINUTE)],
    ])('%s', async (_label, make) => {
      const item = await make();
      await expect(storage.deleteItem(own, item.id)).resolves.toEqual({ message: `Storage item ${item.id} deleted` });
      expect(await ids(own)).not.toContain(item.id);
      expect(await items.hasBytes(item)).toBe(false);
      await expect(refusal(storage.deleteItem(own, item.id))).resolves.toBe('NOT_FOUND');
    });

    it.each<[string, () => [string, string]]>([
      ["another organization's file", () => [own, theirs.id]],
      ['an unknown item', () => [own, UNKNOWN]],
      ["another organization's file, from an unknown organization", () => [UNKNOWN, theirs.id]],
    ])('%s is NOT_FOUND, and the other organization keeps its row and bytes', async (_label, target) => {
      const [organizationId, itemId] = target();
      await expect(refusal(storage.deleteItem(organizationId, itemId))).resolves.toBe('NOT_FOUND');
      expect(await ids(other)).toEqual([theirs.id]);
      expect(await items.hasBytes(theirs)).toBe(true);
    });
  });

  describe('purge: kind, and createdAt strictly before / after; dryRun counts and deletes nothing; one organization only', () => {
    /** Four items of each organization, at known instants; the other organization's copies must all survive every purge. */
    async function seed() {
      const own = await newOrganization();
      const other = await newOrganization();
      const made: Record<string, Record<'old' | 'mid' | 'recent' | 'pending', StorageItem>> = {};
      for (const organizationId of [own, other]) {
        const row = {
          old: await items.complete(organizationId, 10, 'image/png'),
          mid: await items.complete(organizationId, 20, 'video/mp4'),
          recent: await items.complete(organizationId, 30, 'image/gif'),
          pending: await items.pending(organizationId, 5, 15 * MINUTE, 'image/png'),
        };
        const at: Record<keyof typeof row, string> = {
          old: '2024-01-01T00:00:00Z',
          mid: '2024-06-01T00:00:00Z',
          recent: '2025-01-01T00:00:00Z',
          pending: '2025-06-01T00:00:00Z',
        };
        for (const name of Object.keys(row) as Array<keyof typeof row>) {
          await s.db.query('UPDATE storage_items SET created_at = $2 WHERE id = $1', [row[name].id, at[name]]);
        }
        made[organizationId] = row;
      }
      return { own, other, mine: made[own], theirs: made[other] };
    }

    it.each<[string, PurgeDto, string[]]>([
      ['everything (no filter), pending items too', {}, ['old', 'mid', 'recent', 'pending']],
      ['a kind', { kind: StorageKind.IMAGE }, ['old', 'recent', 'pending']],
      ['before, strictly (an item at that instant stays)', { before: '2024-06-01T00:00:00Z' }, ['old']],
      ['after, strictly (an item at that instant stays)', { after: '2025-01-01T00:00:00Z' }, ['pending']],
      ['after and before, a window', { after: '2024-03-01T00:00:00Z', before: '2024-12-31T00:00:00Z' }, ['mid']],
      ['a kind before a date-only instant', { kind: StorageKind.IMAGE, before: '2025-03-01' }, ['old', 'recent']],
      ['a window that is empty', { after: '2025-06-01T00:00:00Z', before: '2024-01-01T00:00:00Z' }, []],
      ['a kind that has nothing', { kind: StorageKind.AUDIO }, []],
    ])('%s', async (_label, dto, purged) => {
      const { own, other, mine, theirs } = await seed();
      const kept = (Object.keys(mine) as Array<keyof typeof mine>).filter((name) => !purged.includes(name));

      const dry = await storage.purge(own, { ...dto, dryRun: true });
      expect(dry).toEqual({
        message: `Dry run (dryRun: true): ${purged.length} item(s) would be purged; nothing was deleted`,
        purgedCount: purged.length,
        dryRun: true,
      });
      expect(await ids(own)).toHaveLength(4);

      await expect(storage.purge(own, dto)).resolves.toEqual({
        message: `Purged ${purged.length} item(s)`,
        purgedCount: purged.length,
        dryRun: false,
      });
      expect(await ids(own)).toEqual(kept.map((name) => mine[name].id).sort());
      for (const name of ['old', 'mid', 'recent'] as const) expect(await items.hasBytes(mine[name])).toBe(kept.includes(name));
      // The other organization has the same kinds at the same instants, and loses none of them.
      expect(await ids(other)).toEqual(
        Object.values(theirs)
          .map((item) => item.id)
          .sort(),
      );
      for (const name of ['old', 'mid', 'recent'] as const) expect(await items.hasBytes(theirs[name])).toBe(true);
    });
  });

  it("lists only the organization's own items, pending ones included, newest first", async () => {
    const own = await newOrganization();
    const first = await items.complete(own, 1, 'image/png', { bytes: false });
    const second = await items.pending(own, 2, 15 * MINUTE, 'audio/mpeg');
    await items.complete(await newOrganization(), 3, 'image/png', { bytes: false });
    const page = await storage.listItems(own, { page: 1, limit: 10 });
    expect({ ids: page.items.map((item) => item.id), states: page.items.map((item) => item.state), total: page.total }).toEqual({
      ids: [second.id, first.id],
      states: ['pending', 'complete'],
      total: 2,
    });
  });
});
