import { Inject, Injectable, Optional } from '@nestjs/common';
import { generateApiKey, hashApiKey } from '../auth/api-key';
import { ApiKeyIndex } from '../auth/api-key-index';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { QuotaService } from '../quota/quota.service';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { pageWindow, totalPages } from '../common/dto/pagination';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import {
  CreateApiKeyDto,
  CreatedApiKeyDto,
  CreatedOrganizationDto,
  CreateOrganizationDto,
  CreateSubscriptionDto,
  ListOrganizationsQueryDto,
  OrganizationDetailDto,
  OrganizationDto,
  OrganizationPageDto,
  OrganizationSettingsDto,
  SubscriptionDto,
  UpdateOrganizationDto,
} from './dto/organization.dto';
import { OrganizationsErrors } from './organizations.errors';
import { OrganizationsRepository } from './organizations.repository';
import { ORGANIZATION_FOUNDER, OrganizationFounder } from './organization-founder';
import { Organization } from './organization.model';

/** Organizations, API keys and subscriptions: what the admin API and the CLI manage. */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly sql: Sql,
    private readonly organizations: OrganizationsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly keyIndex: ApiKeyIndex,
    private readonly transactions: Transactions,
    private readonly bus: InvalidationBus,
    private readonly quota: QuotaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(ORGANIZATION_FOUNDER) private readonly founder?: OrganizationFounder,
  ) {}

  /** With `admin`, the organization and its first admin commit together, or neither does. */
  async createOrganization(dto: CreateOrganizationDto): Promise<CreatedOrganizationDto> {
    const admin = dto.admin;
    if (admin === undefined) return OrganizationDto.from(await this.createIn(this.sql, dto.name));
    if (this.founder === undefined) throw new Error('No OrganizationFounder is provided: the people module is missing');
    const founder = this.founder;
    const created = await this.transactions.run(async (tx) => {
      const organization = await this.createIn(tx, dto.name);
      return { ...OrganizationDto.from(organization), admin: await founder.found(tx, organization.id, admin) };
    });
    // An existing user's sessions learn of their new organization from the next request.
    this.bus.publish('user', created.admin.id);
    return created;
  }

  /**
   * A new organization as every way of making one starts it (the admin API, the CLI, a signed-in user): the default
   * storage allocation and no subscription, so the free flag allowance. `createdBy`: the signed-in user who made it.
   */
  createIn(db: Db, name: string, createdBy: string | null = null): Promise<Organization> {
    return this.organizations.createOrganization(db, name, this.config.storage.defaultAllocationBytes, createdBy);
  }

  async listOrganizations(query: ListOrganizationsQueryDto): Promise<OrganizationPageDto> {
    const { rows, total } = await this.organizations.listOrganizations(this.sql, { search: query.search, ...pageWindow(query) });
    return {
      results: rows.map((organization) => OrganizationDto.from(organization)),
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }

  /** The organization with its keys (never their hashes) and subscriptions: how an operator finds the id of a key to revoke. */
  async getOrganization(organizationId: string): Promise<OrganizationDetailDto> {
    const organization = await this.organizations.findOrganization(this.sql, organizationId);
    if (!organization) throw OrganizationsErrors.organizationNotFound(organizationId);
    // Deleted only while it has no flags or files (DELETE /v1/organization): one deleted between these reads shows no keys.
    const apiKeys = await this.organizations.listApiKeys(this.sql, organizationId);
    const subscriptions = await this.organizations.listSubscriptions(this.sql, organizationId);
    const flagQuota = await this.quota.quotaFor(this.sql, organizationId);
    return OrganizationDetailDto.detail(organization, apiKeys, subscriptions, flagQuota);
  }

  /**
   * The storage allocation and the flag allowance. A flag allowance moves what is locked, so it takes the organization
   * lock as subscription changes do; like them, it is read from the database by every instance on each request, so it
   * holds everywhere from its commit on: fewer flags lock the newest beyond it, more unlock them.
   */
  async updateOrganization(organizationId: string, dto: UpdateOrganizationDto): Promise<OrganizationSettingsDto> {
    if (dto.storageAllocation === undefined && dto.flagAllowance === undefined) throw OrganizationsErrors.nothingToUpdate();
    return this.transactions.run(async (tx) => {
      await this.lockExistingOrganization(tx, organizationId);
      const organization = await this.organizations.updateOrganization(tx, organizationId, {
        storageAllocation: dto.storageAllocation,
        flagAllowance: dto.flagAllowance,
      });
      return OrganizationSettingsDto.settings(organization!, await this.quota.quotaFor(tx, organizationId));
    });
  }

  /** Once committed, the key works on this instance at once, and the others are told to read it. */
  async createApiKey(organizationId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const key = generateApiKey();
    const apiKey = await this.transactions.run(async (tx) => {
      await this.lockExistingOrganization(tx, organizationId);
      return this.apiKeys.createApiKey(tx, organizationId, dto.name, hashApiKey(key), dto.permissions);
    });
    this.keyIndex.add(apiKey);
    this.bus.publish('apiKeyIssued', apiKey.id);
    return CreatedApiKeyDto.from(apiKey, key);
  }

  async revokeApiKey(organizationId: string, keyId: string): Promise<void> {
    if (!(await this.apiKeys.revokeApiKey(this.sql, organizationId, keyId))) {
      throw OrganizationsErrors.apiKeyNotFound(keyId);
    }
    this.bus.publish('apiKey', keyId);
  }

  /** Subscription changes move the allowance, so they take the organization lock like flag writes do. */
  async createSubscription(organizationId: string, dto: CreateSubscriptionDto): Promise<SubscriptionDto> {
    return this.transactions.run(async (tx) => {
      await this.lockExistingOrganization(tx, organizationId);
      return SubscriptionDto.from(await this.organizations.createSubscription(tx, organizationId, dto.plan));
    });
  }

  async cancelSubscription(organizationId: string, subscriptionId: string): Promise<void> {
    return this.transactions.run(async (tx) => {
      await this.lockExistingOrganization(tx, organizationId);
      if (!(await this.organizations.cancelSubscription(tx, organizationId, subscriptionId))) {
        throw OrganizationsErrors.subscriptionNotFound(subscriptionId);
      }
    });
  }

  /** Takes the organization's row lock (see OrganizationsRepository.lockOrganization); 404 when it does not exist. */
  private async lockExistingOrganization(tx: Transaction, organizationId: string): Promise<void> {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) {
      throw OrganizationsErrors.organizationNotFound(organizationId);
    }
  }
}
