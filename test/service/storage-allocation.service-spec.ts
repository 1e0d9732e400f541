import { DomainError } from '../../src/common/domain-error';
import { Sql, Transaction } from '../../src/database/sql';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { SignedUrlQueryDto } from '../../src/storage/signed-urls/dto/signed-url.dto';
import { StorageAllocation } from '../../src/storage/items/storage-allocation';
import { StorageService } from '../../src/storage/items/storage.service';
import { storageItems } from '../factories/storage-items';
import { refusal } from '../support/refusal';
import { ConfiguredServiceTestContext, createServiceContextWith } from '../support/service-module';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const MINUTE = 60 * 1000;
const MAX_UPLOAD_BYTES = 10_000;

/**
 * STORAGE_ENFORCE_ALLOCATION=true (README "Storage"): complete files and pending items whose URL has not expired
 * (or whose upload is streaming) count against the allocation, checked under the organization's lock. The
 * default, where the allocation is only reported, is in storage.service-spec. Uploads themselves (bytes over
 * HTTP) stay in storage-allocation.e2e-spec; here the rules are called as the services the upload host calls.
 */
describe('storage allocation, enforced (services on a real database)', () => {
  let s: ConfiguredServiceTestContext;
  let storage: StorageService;
  let allocation: StorageAllocation;
  let organizations: OrganizationsService;
  let items: ReturnType<typeof storageItems>;

  beforeAll(async () => {
    s = await createServiceContextWith({ env: { STORAGE_ENFORCE_ALLOCATION: 'true', MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) } });
    storage = s.get(StorageService);
    allocation = s.get(StorageAllocation);
    organizations = s.get(OrganizationsService);
    items = storageItems(s);
  });
  afterAll(() => s.close());

  const newOrganization = async (storageAllocation: number) => {
    const { id } = await organizations.createOrganization({ name: 'Allocated Studio' });
    await organizations.updateOrganization(id, { storageAllocation });
    return id;
  };
  const requestUrl = (organizationId: string, size: number, contentType = 'image/png') =>
    storage.createSignedUrl(organizationId, { contentType, size } as SignedUrlQueryDto);
  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.message}` : `unexpected ${String(error)}`),
    );
  const rows = async (organizationId: string) =>
    (
      await s.db.query('SELECT count(*)::int AS n, coalesce(sum(size), 0)::int AS bytes FROM storage_items WHERE organization_id = $1', [
        organizationId,
      ])
    ).rows[0] as { n: number; bytes: number };

  it('is on', () => {
    expect(s.config.storage.enforceAllocation).toBe(true);
    expect(allocation.enforced).toBe(true);
  });

  describe('what counts against it: complete files, and pending items until their URL expires or while they upload', () => {
    it.each<[string, (organizationId: string, other: string) => Promise<unknown>, number]>([
      ['nothing', async () => undefined, 0],
      ['a complete file', (o) => items.complete(o, 400, 'image/png', { bytes: false }), 400],
      ['a pending item whose URL has not expired', (o) => items.pending(o, 300, 15 * MINUTE), 300],
      ['a pending item whose URL expired', (o) => items.pending(o, 300, -MINUTE), 0],
      [
        'a pending item whose URL expired while its upload streams',
        async (o) => {
          const item = await items.pending(o, 300, -MINUTE);
          await s.db.query('UPDATE storage_items SET upload_claimed_at = clock_timestamp() WHERE id = $1', [item.id]);
        },
        300,
      ],
      [
        "another organization's files and reservations",
        async (_o, other) => {
          await items.complete(other, 400, 'image/png', { bytes: false });
          await items.pending(other, 300, 15 * MINUTE);
        },
        0,
      ],
      [
        'all of them',
        async (o) => {
          await items.complete(o, 400, 'video/mp4', { bytes: false });
          await items.pending(o, 200, 15 * MINUTE, 'audio/mpeg');
          await items.pending(o, 100, -MINUTE);
        },
        600,
      ],
    ])('%s', async (_label, arrange, reserved) => {
      const organizationId = await newOrganization(1000);
      await arrange(organizationId, await newOrganization(1000));
      expect(await allocation.usageNow(organizationId)).toEqual({ allocation: 1000, reserved });
      const before = await rows(organizationId);

      // One byte more than the room left is refused, says how much is used and left, and stores nothing.
      const over = 1000 - reserved + 1;
      await expect(outcome(requestUrl(organizationId, over))).resolves.toBe(
        `ALLOCATION_EXCEEDED: The file (${over} bytes) does not fit in the organization's storage allocation: ` +
          `${reserved} of its 1000 bytes are used or reserved by pending uploads, ${1000 - reserved} left`,
      );
      expect(await rows(organizationId)).toEqual(before);
      // Exactly the room left is granted, and reserved at once.
      await expect(outcome(requestUrl(organizationId, 1000 - reserved))).resolves.toBe('accepted');
      expect(await allocation.usageNow(organizationId)).toEqual({ allocation: 1000, reserved: 1000 });
    });
  });

  it('serialises racing requests under the organization lock: exactly floor(allocation / size) are granted', async () => {
    const organizationId = await newOrganization(1000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refusal(requestUrl(organizationId, 73))));
    expect(answers.filter((answer) => answer === 'accepted')).toHaveLength(13);
    expect(answers.filter((answer) => answer === 'ALLOCATION_EXCEEDED')).toHaveLength(7);
    expect(await rows(organizationId)).toEqual({ n: 13, bytes: 949 });
  });

  it.each<[string, number, number, string]>([
    ['a 0-byte file fits in a full allocation', 100, 100, 'accepted'],
    ['nothing fits in an allocation already passed, not even 0 bytes', 100, 99, 'ALLOCATION_EXCEEDED'],
  ])('%s', async (_label, used, storageAllocation, expected) => {
    const organizationId = await newOrganization(1000);
    await items.complete(organizationId, used, 'image/png', { bytes: false });
    await organizations.updateOrganization(organizationId, { storageAllocation });
    await expect(refusal(requestUrl(organizationId, 0))).resolves.toBe(expected);
  });

  it('lowering an allocation cancels no reservation', async () => {
    const organizationId = await newOrganization(1000);
    const granted = await requestUrl(organizationId, 500);
    await organizations.updateOrganization(organizationId, { storageAllocation: 100 });
    const { rows: stored } = await s.db.query('SELECT state, size::int AS size FROM storage_items WHERE id = $1', [granted.mediaId]);
    expect(stored).toEqual([{ state: 'pending', size: 500 }]);
    expect(await allocation.usageNow(organizationId)).toEqual({ allocation: 100, reserved: 500 });
  });

  it.each<[string, SignedUrlQueryDto, string]>([
    [
      'a size above MAX_UPLOAD_BYTES is PAYLOAD_TOO_LARGE, before the allocation',
      { contentType: 'image/png', size: MAX_UPLOAD_BYTES + 1 },
      'PAYLOAD_TOO_LARGE',
    ],
    ['a malformed contentType is VALIDATION_ERROR, before the allocation', { contentType: 'nope', size: 20 }, 'VALIDATION_ERROR'],
    ['a non-allocated URL (no size) is never refused', {}, 'accepted'],
  ])('in a full organization, %s, and stores nothing', async (_label, query, expected) => {
    const organizationId = await newOrganization(10);
    await items.complete(organizationId, 10, 'image/png', { bytes: false });
    await expect(refusal(storage.createSignedUrl(organizationId, query))).resolves.toBe(expected);
    expect(await rows(organizationId)).toEqual({ n: 1, bytes: 10 });
  });

  describe('the check a non-allocated upload makes when its row is written (withinAllocation)', () => {
    it('runs the write in the transaction that holds the lock when the bytes fit, and not at all when they do not', async () => {
      const organizationId = await newOrganization(1000);
      await items.complete(organizationId, 600, 'image/png', { bytes: false });
      const ran: Array<{ bytes: number; inTransaction: boolean }> = [];
      const write = (bytes: number) => (db: Sql | Transaction) => {
        ran.push({ bytes, inTransaction: db instanceof Transaction });
        return Promise.resolve(bytes);
      };
      await expect(outcome(allocation.withinAllocation(organizationId, 401, write(401)))).resolves.toMatch(
        /^ALLOCATION_EXCEEDED: The file \(401 bytes\) does not fit.*600 of its 1000 bytes.*400 left$/,
      );
      await expect(allocation.withinAllocation(organizationId, 400, write(400))).resolves.toBe(400);
      expect(ran).toEqual([{ bytes: 400, inTransaction: true }]);
    });

    it('says the organization is gone (NOT_FOUND) when it no longer exists', async () => {
      await expect(refusal(allocation.withinAllocation(UNKNOWN, 1, () => Promise.resolve()))).resolves.toBe('NOT_FOUND');
      await expect(refusal(allocation.usageNow(UNKNOWN))).resolves.toBe('NOT_FOUND');
      await expect(refusal(requestUrl(UNKNOWN, 1))).resolves.toBe('NOT_FOUND');
    });
  });
});
