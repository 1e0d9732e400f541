import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';

@Injectable()
export class QuotaRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Flags defined (archived included) and whether any subscription is active, in one round trip. */
  async usage(organizationId: string): Promise<{ used: number; subscribed: boolean }> {
    const [row] = await this.txHost.tx.query(
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
    const rows: { id: string }[] = await this.txHost.tx.query(
      `SELECT id FROM flags WHERE organization_id = $1 ORDER BY created_at, id OFFSET $2`,
      [organizationId, allowance],
    );
    return new Set(rows.map((row) => row.id));
  }
}
