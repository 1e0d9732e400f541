import { Injectable } from '@nestjs/common';
import { pagedRows } from '../database/paged-rows';
import { containsPattern } from '../common/like-pattern';
import { Db, Transaction } from '../database/sql';
import { ApiKeyRecord, Organization, Subscription } from './organization.model';

// storage_allocation is a bigint; float8 carries every whole number up to 2^53 exactly, and the API allows no more.
const ORGANIZATION = `id, name, storage_allocation::float8 AS "storageAllocation", flag_allowance AS "flagAllowance", created_at AS "createdAt"`;
const SUBSCRIPTION = `id, organization_id AS "organizationId", plan, status, created_at AS "createdAt",
  cancelled_at AS "cancelledAt"`;
// Deliberately without key_hash: what the read-back never reads, it cannot show.
const API_KEY_RECORD = `id, name, permissions, created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** Data access for organizations and their subscriptions (API keys: auth's ApiKeysRepository), on the `Db` it is given. */
@Injectable()
export class OrganizationsRepository {
  /** `createdBy`: the signed-in user who made it (POST /v1/organizations), null for the admin API and the CLI. */
  async createOrganization(db: Db, name: string, storageAllocation: number, createdBy: string | null = null): Promise<Organization> {
    const organization = await db.row<Organization>(
      `INSERT INTO organizations (name, storage_allocation, created_by) VALUES ($1, $2, $3) RETURNING ${ORGANIZATION}`,
      [name, storageAllocation, createdBy],
    );
    return organization!;
  }

  findOrganization(db: Db, organizationId: string): Promise<Organization | null> {
    return db.row<Organization>(`SELECT ${ORGANIZATION} FROM organizations WHERE id = $1`, [organizationId]);
  }

  /** A page of organizations, newest first; `search` is a case-insensitive substring of the name, taken literally. */
  async listOrganizations(db: Db, filter: { search?: string; offset: number; limit: number }): Promise<{ rows: Organization[]; total: number }> {
    const parameters: unknown[] = [];
    let where = 'TRUE';
    if (filter.search) {
      parameters.push(containsPattern(filter.search));
      where = 'name ILIKE $1';
    }
    return pagedRows<Organization>(db, {
      columns: ORGANIZATION,
      table: 'organizations',
      where,
      parameters,
      offset: filter.offset,
      limit: filter.limit,
    });
  }

  /**
   * Every API key the organization was issued, revoked ones included, oldest first. The api_keys rows belong to
   * auth's ApiKeysRepository; this read-only view of them exists for the admin read-back and selects no key hash.
   */
  listApiKeys(db: Db, organizationId: string): Promise<ApiKeyRecord[]> {
    return db.rows<ApiKeyRecord>(`SELECT ${API_KEY_RECORD} FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId]);
  }

  /** Every subscription of the organization, cancelled ones included, oldest first. */
  listSubscriptions(db: Db, organizationId: string): Promise<Subscription[]> {
    return db.rows<Subscription>(`SELECT ${SUBSCRIPTION} FROM subscriptions WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId]);
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

  /** Sets what `changes` holds (undefined: left as it is; a null flagAllowance: back to its level's). */
  updateOrganization(
    db: Db,
    organizationId: string,
    changes: { storageAllocation?: number; flagAllowance?: number | null },
  ): Promise<Organization | null> {
    return db.row<Organization>(
      `UPDATE organizations
          SET storage_allocation = CASE WHEN $2 THEN $3::bigint ELSE storage_allocation END,
              flag_allowance = CASE WHEN $4 THEN $5::integer ELSE flag_allowance END
        WHERE id = $1 RETURNING ${ORGANIZATION}`,
      [
        organizationId,
        changes.storageAllocation !== undefined,
        changes.storageAllocation ?? null,
        changes.flagAllowance !== undefined,
        changes.flagAllowance ?? null,
      ],
    );
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
