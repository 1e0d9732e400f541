import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql';

@Injectable()
export class QuotaRepository {
  constructor(private readonly sql: Sql) {}

  /** Flags defined (archived included) and whether any subscription is active, in one round trip. */
  async usage(organizationId: string): Promise<{ used: number; subscribed: boolean }> {
    const [row] = await this.sql.rows<{ used: number; subscribed: boolean }>(
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
  async lockedFlagIds(organizationId: string, allowance: number): Promise<Set<string>> {
    const rows = await this.sql.rows<{ id: string }>(
      `SELECT id FROM flags WHERE organization_id = $1 ORDER BY created_at, id OFFSET $2`,
      [organizationId, allowance],
    );
    return new Set(rows.map((row) => row.id));
  }
}
