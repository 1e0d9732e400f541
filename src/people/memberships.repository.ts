import { Injectable } from '@nestjs/common';
import { Role } from '../auth/roles';
import { Db, Transaction } from '../database/sql';
import { FormerMembership, Membership } from './people.model';

const MEMBER = `m.user_id AS "userId", u.email, u.name, m.role, m.created_at AS "createdAt"`;

/**
 * The `memberships` rows, on the `Db` it is given: one per user and organization, `left_at` set once they leave.
 * Every change sets `changed_xid`, which the change feed reads so that every instance re-reads the user's sessions.
 * Changes that could take away an organization's last admin run under the organization's row lock (PeopleService).
 */
@Injectable()
export class MembershipsRepository {
  /** Adds the user (or brings a former member back) with `role`; null when they are a member already. */
  add(db: Db, organizationId: string, userId: string, role: Role): Promise<{ createdAt: Date } | null> {
    return db.row<{ createdAt: Date }>(
      `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (organization_id, user_id) DO UPDATE
         SET role = EXCLUDED.role, created_at = clock_timestamp(), left_at = NULL, changed_xid = pg_current_xact_id()
         WHERE memberships.left_at IS NOT NULL
       RETURNING created_at AS "createdAt"`,
      [organizationId, userId, role],
    );
  }

  find(db: Db, organizationId: string, userId: string): Promise<Membership | null> {
    return db.row<Membership>(
      `SELECT ${MEMBER} FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = $1 AND m.user_id = $2 AND m.left_at IS NULL`,
      [organizationId, userId],
    );
  }

  /** Current members, oldest first. */
  list(db: Db, organizationId: string): Promise<Membership[]> {
    return db.rows<Membership>(
      `SELECT ${MEMBER} FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = $1 AND m.left_at IS NULL ORDER BY m.created_at, m.user_id`,
      [organizationId],
    );
  }

  /** Those who left, most recent first. */
  listFormer(db: Db, organizationId: string): Promise<FormerMembership[]> {
    return db.rows<FormerMembership>(
      `SELECT m.user_id AS "userId", u.name, m.left_at AS "leftAt" FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = $1 AND m.left_at IS NOT NULL ORDER BY m.left_at DESC, m.user_id`,
      [organizationId],
    );
  }

  async setRole(db: Db, organizationId: string, userId: string, role: Role): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE memberships SET role = $3, changed_xid = pg_current_xact_id()
       WHERE organization_id = $1 AND user_id = $2 AND left_at IS NULL RETURNING user_id`,
      [organizationId, userId, role],
    );
    return rows.length > 0;
  }

  async remove(db: Db, organizationId: string, userId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE memberships SET left_at = clock_timestamp(), changed_xid = pg_current_xact_id()
       WHERE organization_id = $1 AND user_id = $2 AND left_at IS NULL RETURNING user_id`,
      [organizationId, userId],
    );
    return rows.length > 0;
  }

  /** Ends every membership of the user (a deleted user). */
  async removeAll(tx: Transaction, userId: string): Promise<void> {
    await tx.rows(`UPDATE memberships SET left_at = clock_timestamp(), changed_xid = pg_current_xact_id() WHERE user_id = $1 AND left_at IS NULL`, [
      userId,
    ]);
  }

  /** The organizations where the user is an admin, in id order (the order their locks are taken in). */
  async adminOf(db: Db, userId: string): Promise<string[]> {
    const rows = await db.rows<{ organizationId: string }>(
      `SELECT organization_id AS "organizationId" FROM memberships WHERE user_id = $1 AND role = 'admin' AND left_at IS NULL ORDER BY organization_id`,
      [userId],
    );
    return rows.map((row) => row.organizationId);
  }

  async adminCount(db: Db, organizationId: string): Promise<number> {
    const [{ count }] = await db.rows<{ count: number }>(
      `SELECT count(*)::int AS count FROM memberships WHERE organization_id = $1 AND role = 'admin' AND left_at IS NULL`,
      [organizationId],
    );
    return count;
  }
}
