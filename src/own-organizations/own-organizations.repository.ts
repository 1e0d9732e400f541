import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';

/**
 * What making and removing an organization by its own people reads and writes beyond organizations' and people's
 * repositories: the count of a user's organizations, the copy of members, and what must be empty before a delete.
 * Flags and files are read here as counts only (rows of the features above), never written.
 */
@Injectable()
export class OwnOrganizationsRepository {
  async createdBy(db: Db, userId: string): Promise<number> {
    const [{ count }] = await db.rows<{ count: number }>(`SELECT count(*)::int AS count FROM organizations WHERE created_by = $1`, [userId]);
    return count;
  }

  /**
   * Takes a share lock on the organization's row: member changes (which take its update lock) wait until the copy
   * commits, and the copy reads the members they leave; flag writes, which also lock the row, wait as briefly.
   */
  async shareOrganization(tx: Transaction, organizationId: string): Promise<boolean> {
    return (await tx.rows('SELECT id FROM organizations WHERE id = $1 FOR SHARE', [organizationId])).length > 0;
  }

  /** The current members of `from` but `except` join `to` with their roles; answers who joined. */
  async copyMembers(tx: Transaction, from: string, to: string, except: string): Promise<string[]> {
    const rows = await tx.rows<{ userId: string }>(
      `INSERT INTO memberships (organization_id, user_id, role)
       SELECT $2, user_id, role FROM memberships WHERE organization_id = $1 AND left_at IS NULL AND user_id <> $3
       ORDER BY created_at, user_id
       RETURNING user_id AS "userId"`,
      [from, to, except],
    );
    return rows.map((row) => row.userId);
  }

  /** Flags (archived ones included) and files (uploads in progress included): what a delete must find none of. */
  async contents(db: Db, organizationId: string): Promise<{ flags: number; files: number }> {
    const row = await db.row<{ flags: number; files: number }>(
      `SELECT (SELECT count(*) FROM flags WHERE organization_id = $1)::int AS flags,
              (SELECT count(*) FROM storage_items WHERE organization_id = $1)::int AS files`,
      [organizationId],
    );
    return row!;
  }

  /** Who loses the organization when it goes: its current members and its live keys. */
  async dependents(db: Db, organizationId: string): Promise<{ userIds: string[]; keyIds: string[] }> {
    const members = await db.rows<{ id: string }>(`SELECT user_id AS id FROM memberships WHERE organization_id = $1 AND left_at IS NULL`, [
      organizationId,
    ]);
    const keys = await db.rows<{ id: string }>(`SELECT id FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL`, [organizationId]);
    return { userIds: members.map((row) => row.id), keyIds: keys.map((row) => row.id) };
  }

  async rename(db: Db, organizationId: string, name: string): Promise<{ id: string; name: string } | null> {
    return db.row<{ id: string; name: string }>(`UPDATE organizations SET name = $2 WHERE id = $1 RETURNING id, name`, [organizationId, name]);
  }

  /** Removes the organization and, by the schema's cascades, its memberships, invitations, keys, subscriptions and log. */
  async delete(tx: Transaction, organizationId: string): Promise<void> {
    await tx.rows('DELETE FROM organizations WHERE id = $1', [organizationId]);
  }
}
