import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';
import { Organization, Subscription } from './organization.model';

// storage_allocation is a bigint; float8 carries every whole number up to 2^53 exactly, and the API allows no more.
const ORGANIZATION = `id, name, storage_allocation::float8 AS "storageAllocation", created_at AS "createdAt"`;
const SUBSCRIPTION = `id, organization_id AS "organizationId", plan, status, created_at AS "createdAt",
  cancelled_at AS "cancelledAt"`;

/** Data access for organizations and their subscriptions (API keys: auth's ApiKeysRepository), on the `Db` it is given. */
@Injectable()
export class OrganizationsRepository {
  async createOrganization(db: Db, name: string, storageAllocation: number): Promise<Organization> {
    const organization = await db.row<Organization>(
      `INSERT INTO organizations (name, storage_allocation) VALUES ($1, $2) RETURNING ${ORGANIZATION}`,
      [name, storageAllocation],
    );
    return organization!;
  }

  findOrganization(db: Db, organizationId: string): Promise<Organization | null> {
    return db.row<Organization>(`SELECT ${ORGANIZATION} FROM organizations WHERE id = $1`, [organizationId]);
  }

  /**
   * Takes the organization's row lock for the rest of the transaction; false when there is no such organization.
   * Every write that depends on the organization's allowance (flag creates and edits, subscription changes)
   * takes it first, so the lock order is always organization row, then flag rows.
   */
  async lockOrganization(tx: Transaction, organizationId: string): Promise<boolean> {
    const rows = await tx.rows('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
    return rows.length > 0;
  }

  updateStorageAllocation(db: Db, organizationId: string, storageAllocation: number): Promise<Organization | null> {
    return db.row<Organization>(`UPDATE organizations SET storage_allocation = $2 WHERE id = $1 RETURNING ${ORGANIZATION}`, [
      organizationId,
      storageAllocation,
    ]);
  }

  async createSubscription(db: Db, organizationId: string, plan: string): Promise<Subscription> {
    const subscription = await db.row<Subscription>(
      `INSERT INTO subscriptions (organization_id, plan, status) VALUES ($1, $2, 'active') RETURNING ${SUBSCRIPTION}`,
      [organizationId, plan],
    );
    return subscription!;
  }

  /** Cancels an active subscription; false when the organization has no such active subscription. */
  async cancelSubscription(db: Db, organizationId: string, subscriptionId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE subscriptions SET status = 'cancelled', cancelled_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND status = 'active' RETURNING id`,
      [subscriptionId, organizationId],
    );
    return rows.length > 0;
  }
}
