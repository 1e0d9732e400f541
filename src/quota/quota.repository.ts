import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';

export interface FlagUsage {
  used: number;
  subscribed: boolean;
  /** The organization's own allowance (set by the operator), or null for its level's. */
  ownAllowance: number | null;
}

/** Flag usage and the lock ranking, on the `Db` it is given. */
@Injectable()
export class QuotaRepository {
  /** Flags defined (archived included), whether any subscription is active and the organization's own allowance, in one round trip. */
  async usage(db: Db, organizationId: string): Promise<FlagUsage> {
    const [row] = await db.rows<FlagUsage>(
      `SELECT (SELECT count(*) FROM flags WHERE organization_id = $1)::int AS used,
              EXISTS (SELECT 1 FROM subscriptions WHERE organization_id = $1 AND status = 'active') AS subscribed,
              (SELECT flag_allowance FROM organizations WHERE id = $1) AS "ownAllowance"`,
      [organizationId],
    );
    return { used: row.used, subscribed: row.subscribed, ownAllowance: row.ownAllowance };
  }

  /**
   * The lock ranking: flags ordered by creation time, then id, archived ones included; every flag past the
   * first `allowance` is locked. With `among`, only those of these flags (a page, one flag): the ranking is walked on
   * the (organization_id, created_at, id) index up to the first locked flag, and no other flag's id is read.
   */
  async lockedFlagIds(db: Db, organizationId: string, allowance: number, among?: readonly string[]): Promise<Set<string>> {
    if (among === undefined) {
      const rows = await db.rows<{ id: string }>(`SELECT id FROM flags WHERE organization_id = $1 ORDER BY created_at, id OFFSET $2`, [
        organizationId,
        allowance,
      ]);
      return new Set(rows.map((row) => row.id));
    }
    if (among.length === 0) return new Set();
    const rows = await db.rows<{ id: string }>(
      `SELECT id FROM flags
        WHERE organization_id = $1 AND id = ANY($3::uuid[])
          AND (created_at, id) >= (SELECT created_at, id FROM flags WHERE organization_id = $1 ORDER BY created_at, id OFFSET $2 LIMIT 1)`,
      [organizationId, allowance, among],
    );
    return new Set(rows.map((row) => row.id));
  }
}
