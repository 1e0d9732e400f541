import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql';
import { ApiKey, Organization, Subscription } from './organization.model';
import { Permission } from './permission';

// storage_allocation is a bigint; float8 carries every whole number up to 2^53 exactly, and the API allows no more.
const ORGANIZATION = `id, name, storage_allocation::float8 AS "storageAllocation", created_at AS "createdAt"`;
const API_KEY = `id, organization_id AS "organizationId", name, key_hash AS "keyHash", permissions,
  created_at AS "createdAt", revoked_at AS "revokedAt"`;
const SUBSCRIPTION = `id, organization_id AS "organizationId", plan, status, created_at AS "createdAt",
  cancelled_at AS "cancelledAt"`;

/** Data access for organizations, their API keys and subscriptions. Runs in the caller's transaction, if any. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly sql: Sql) {}

  async createOrganization(name: string, storageAllocation: number): Promise<Organization> {
    const organization = await this.sql.row<Organization>(
      `INSERT INTO organizations (name, storage_allocation) VALUES ($1, $2) RETURNING ${ORGANIZATION}`,
      [name, storageAllocation],
    );
    return organization!;
  }

  findOrganization(organizationId: string): Promise<Organization | null> {
    return this.sql.row<Organization>(`SELECT ${ORGANIZATION} FROM organizations WHERE id = $1`, [organizationId]);
  }

  /**
   * Takes the organization's row lock for the rest of the transaction; false when there is no such organization.
   * Every write that depends on the organization's allowance (flag creates and edits, subscription changes)
   * takes it first, so the lock order is always organization row, then flag rows.
   */
  async lockOrganization(organizationId: string): Promise<boolean> {
    const rows = await this.sql.rows('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
    return rows.length > 0;
  }

  updateStorageAllocation(organizationId: string, storageAllocation: number): Promise<Organization | null> {
    return this.sql.row<Organization>(
      `UPDATE organizations SET storage_allocation = $2 WHERE id = $1 RETURNING ${ORGANIZATION}`,
      [organizationId, storageAllocation],
    );
  }

  async createApiKey(organizationId: string, name: string, keyHash: string, permissions: Permission[]): Promise<ApiKey> {
    const key = await this.sql.row<ApiKey>(
      `INSERT INTO api_keys (organization_id, name, key_hash, permissions) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY}`,
      [organizationId, name, keyHash, permissions],
    );
    return key!;
  }

  /** The active keys among `keyHashes`, in one query (the authenticator batches concurrent lookups). */
  findActiveApiKeysByHashes(keyHashes: readonly string[]): Promise<ApiKey[]> {
    return this.sql.rows<ApiKey>(`SELECT ${API_KEY} FROM api_keys WHERE key_hash = ANY($1::text[]) AND revoked_at IS NULL`, [keyHashes]);
  }

  /** The organization's key with this id while it is active (a stream token names a key by id). */
  findActiveApiKeyById(organizationId: string, keyId: string): Promise<ApiKey | null> {
    return this.sql.row<ApiKey>(`SELECT ${API_KEY} FROM api_keys WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL`, [
      keyId,
      organizationId,
    ]);
  }

  /** Marks the key revoked; false when the organization has no such active key. */
  async revokeApiKey(organizationId: string, keyId: string): Promise<boolean> {
    const rows = await this.sql.rows(
      `UPDATE api_keys SET revoked_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL RETURNING id`,
      [keyId, organizationId],
    );
    return rows.length > 0;
  }

  async createSubscription(organizationId: string, plan: string): Promise<Subscription> {
    const subscription = await this.sql.row<Subscription>(
      `INSERT INTO subscriptions (organization_id, plan, status) VALUES ($1, $2, 'active') RETURNING ${SUBSCRIPTION}`,
      [organizationId, plan],
    );
    return subscription!;
  }

  /** Cancels an active subscription; false when the organization has no such active subscription. */
  async cancelSubscription(organizationId: string, subscriptionId: string): Promise<boolean> {
    const rows = await this.sql.rows(
      `UPDATE subscriptions SET status = 'cancelled', cancelled_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND status = 'active' RETURNING id`,
      [subscriptionId, organizationId],
    );
    return rows.length > 0;
  }
}
