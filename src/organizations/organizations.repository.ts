import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { IsNull } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity';
import { OrganizationEntity } from './organization.entity';
import { Permission } from './permission';
import { SubscriptionEntity } from './subscription.entity';

/** Data access for organizations, their API keys and subscriptions. Runs in the caller's transaction, if any. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  private get manager() {
    return this.txHost.tx;
  }

  createOrganization(name: string, storageAllocation: number): Promise<OrganizationEntity> {
    return this.manager.save(this.manager.create(OrganizationEntity, { name, storageAllocation }));
  }

  findOrganization(organizationId: string): Promise<OrganizationEntity | null> {
    return this.manager.findOneBy(OrganizationEntity, { id: organizationId });
  }

  /**
   * Takes the organization's row lock for the rest of the transaction. Every write that depends on the
   * organization's allowance (flag creates and edits, subscription changes) takes it first, so the
   * lock order is always organization row, then flag rows.
   */
  async lockOrganization(organizationId: string): Promise<boolean> {
    const rows: unknown[] = await this.manager.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [
      organizationId,
    ]);
    return rows.length > 0;
  }

  async updateStorageAllocation(organizationId: string, storageAllocation: number): Promise<OrganizationEntity | null> {
    await this.manager.update(OrganizationEntity, { id: organizationId }, { storageAllocation });
    return this.findOrganization(organizationId);
  }

  createApiKey(organizationId: string, name: string, keyHash: string, permissions: Permission[]): Promise<ApiKeyEntity> {
    return this.manager.save(this.manager.create(ApiKeyEntity, { organizationId, name, keyHash, permissions }));
  }

  findActiveApiKeyByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.manager.findOneBy(ApiKeyEntity, { keyHash, revokedAt: IsNull() });
  }

  /** Marks the key revoked; false when the organization has no such active key. */
  async revokeApiKey(organizationId: string, keyId: string): Promise<boolean> {
    const result = await this.manager.update(
      ApiKeyEntity,
      { id: keyId, organizationId, revokedAt: IsNull() },
      { revokedAt: () => 'clock_timestamp()' },
    );
    return (result.affected ?? 0) > 0;
  }

  createSubscription(organizationId: string, plan: string): Promise<SubscriptionEntity> {
    return this.manager.save(this.manager.create(SubscriptionEntity, { organizationId, plan, status: 'active' }));
  }

  async cancelSubscription(organizationId: string, subscriptionId: string): Promise<boolean> {
    const result = await this.manager.update(
      SubscriptionEntity,
      { id: subscriptionId, organizationId, status: 'active' },
      { status: 'cancelled', cancelledAt: () => 'clock_timestamp()' },
    );
    return (result.affected ?? 0) > 0;
  }

  hasActiveSubscription(organizationId: string): Promise<boolean> {
    return this.manager.existsBy(SubscriptionEntity, { organizationId, status: 'active' });
  }
}
