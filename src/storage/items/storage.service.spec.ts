import { systemClock } from '../../common/clock';
import { AppConfig } from '../../config/app-config';
import { Sql } from '../../database/sql';
import { OrganizationsRepository } from '../../organizations/organizations.repository';
import { ObjectStore } from '../object-store/object-store';
import { SignedUrls } from '../signed-urls/signed-urls';
import { StorageErrorCode } from '../storage.errors';
import { StorageAllocation } from './storage-allocation';
import { StorageRepository } from './storage.repository';
import { StorageService } from './storage.service';
import type { OrganizationEvents } from '../../events/organization-events';
import type { Transactions } from '../../database/transactions';
import type { WebhookEvents } from '../../webhooks/webhook-events';

describe('StorageService.statistics', () => {
  const organizationId = '0b7e4d1c-2f55-4c4e-9d1a-6f0c2a3b4c5d';
  const service = (organization: { storageAllocation: number } | null) =>
    new StorageService(
      {} as Sql,
      { usageByKind: async () => [{ kind: 'image', count: 2, size: 300 }] } as unknown as StorageRepository,
      { findOrganization: async () => organization } as unknown as OrganizationsRepository,
      {} as SignedUrls,
      {} as ObjectStore,
      {} as AppConfig,
      {} as StorageAllocation,
      systemClock,
      {} as OrganizationEvents,
      {} as Transactions,
      {} as WebhookEvents,
    );

  it('reports usage against the allocation', async () => {
    const stats = await service({ storageAllocation: 200 }).statistics(organizationId);
    expect(stats).toMatchObject({ totalStorage: 200, usedStorage: 300, overageStorage: 100 });
    expect(stats.breakdown).toContainEqual({ kind: 'image', count: 2, size: 300 });
  });

  it('says the organization is missing, not a file, when it was removed after the key authenticated', async () => {
    await expect(service(null).statistics(organizationId)).rejects.toMatchObject({
      status: 404,
      code: StorageErrorCode.NOT_FOUND,
      message: `Organization ${organizationId} no longer exists (removed after this API key authenticated)`,
    });
  });
});
