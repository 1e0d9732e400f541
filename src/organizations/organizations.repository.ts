import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql';
import { Organization, Subscription } from './organization.model';

// storage_allocation is a bigint; float8 carries every whole number up to 2^53 exactly, and the API allows no more.
const ORGANIZATION = `id, name, storage_allocation::float8 AS "storageAllocation", created_at AS "createdAt"`;
const SUBSCRIPTION = `id, organization_id AS "organizationId", plan, status, created_at AS "createdAt",
  cancelled_at AS "cancelledAt"`;

/** Data access for organizations and their subscriptions (API keys: auth's ApiKeysRepository). Runs in the caller's transaction, if any. */
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
