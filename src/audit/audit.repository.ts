import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql';
import { AuditEntry, NewAuditEntry } from './audit-entry';

const COLUMNS = `id, organization_id AS "organizationId", flag_id AS "flagId", flag_key AS "flagKey",
  actor_type AS "actorType", actor_id AS "actorId", action, before, after, created_at AS "createdAt"`;

/**
 * The append-only audit log: it stores the label, actor and before/after states it is given, in the caller's
 * transaction, and reads them back. The table itself refuses updates and deletes (see the Init migration).
 */
@Injectable()
export class AuditRepository {
  constructor(private readonly sql: Sql) {}

  async append(entry: NewAuditEntry): Promise<void> {
    await this.sql.rows(
      `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)`,
      [
        entry.organizationId,
        entry.flagId,
        entry.flagKey,
        entry.actorType,
        entry.actorId,
        entry.action,
        jsonOrNull(entry.before),
        jsonOrNull(entry.after),
      ],
    );
  }

  /**
   * The `after` state of an entry of this flag in this organization; null when there is no such entry or it has
   * no after state (a deletion). Entries of other flags and organizations are indistinguishable from none.
   */
  async afterState(organizationId: string, flagId: string, entryId: string): Promise<unknown> {
    const row = await this.sql.row<{ after: unknown }>(
      `SELECT after FROM flag_audit_entries WHERE organization_id = $1 AND flag_id = $2 AND id = $3 AND after IS NOT NULL`,
      [organizationId, flagId, entryId],
    );
    return row?.after ?? null;
  }

  /** Newest first, ties broken by id so pages never overlap. */
  async list(
    organizationId: string,
    filter: { flagId?: string; offset: number; limit: number },
  ): Promise<{ entries: AuditEntry[]; total: number }> {
    const parameters: unknown[] = [organizationId];
    let where = 'organization_id = $1';
    if (filter.flagId) {
      parameters.push(filter.flagId);
      where += ` AND flag_id = $${parameters.length}`;
    }
    const [entries, [{ total }]] = await Promise.all([
      this.sql.rows<AuditEntry>(
        `SELECT ${COLUMNS} FROM flag_audit_entries WHERE ${where} ORDER BY created_at DESC, id DESC
         OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
        [...parameters, filter.offset, filter.limit],
      ),
      this.sql.rows<{ total: number }>(`SELECT count(*)::int AS total FROM flag_audit_entries WHERE ${where}`, parameters),
    ]);
    return { entries, total };
  }
}

/** A JSON `null` snapshot is stored as SQL NULL: a creation has no before, a deletion no after. */
function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
