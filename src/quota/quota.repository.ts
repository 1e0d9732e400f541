import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';

/** Flag usage and the lock ranking, on the `Db` it is given. */
@Injectable()
export class QuotaRepository {
  /** Flags defined (archived included) and whether any subscription is active, in one round trip. */
  async usage(db: Db, organizationId: string): Promise<{ used: number; subscribed: boolean }> {
    const [row] = await db.rows<{ used: number; subscribed: boolean }>(
      `SELECT (SELECT count(*) FROM flags WHERE organization_id = $1)::int AS used,
              EXISTS (SELECT 1 FROM subscriptions WHERE organization_id = $1 AND status = 'active') AS subscribed`,
      [organizationId],
    );
    return { used: row.used, subscribed: row.subscribed };
  }

  /**
   * The lock ranking: flags ordered by creation time, then id, archived ones included; every flag past the
   * first `allowance` is locked.
   */
  async lockedFlagIds(db: Db, organizationId: string, allowance: number): Promise<Set<string>> {
    const rows = await db.rows<{ id: string }>(`SELECT id FROM flags WHERE organization_id = $1 ORDER BY created_at, id OFFSET $2`, [
      organizationId,
      allowance,
    ]);
    return new Set(rows.map((row) => row.id));
  }
}
