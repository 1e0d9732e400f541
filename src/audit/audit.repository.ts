import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';
import { AuditEntry, NewAuditEntry } from './audit-entry';

const COLUMNS = `id, organization_id AS "organizationId", flag_id AS "flagId", flag_key AS "flagKey",
  actor_type AS "actorType", actor_id AS "actorId", action, before, after, context, created_at AS "createdAt"`;

/**
 * The append-only audit log: it stores the label, actor and before/after states it is given, on the `Db` it is
 * given (the transaction of the change it records), and reads them back. The table itself refuses updates and
 * deletes (see the Init migration).
 */
@Injectable()
export class AuditRepository {
  async append(db: Db, entry: NewAuditEntry): Promise<void> {
    await db.rows(
      `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after, context)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb)`,
      [
        entry.organizationId,
        entry.flagId,
        entry.flagKey,
        entry.actorType,
        entry.actorId,
        entry.action,
        jsonOrNull(entry.before),
        jsonOrNull(entry.after),
        jsonOrNull(entry.context),
      ],
    );
  }

  /**
   * The `after` state of an entry of this flag in this organization; null when there is no such entry or it has
   * no after state (a deletion). Entries of other flags and organizations are indistinguishable from none.
   */
  async afterState(db: Db, organizationId: string, flagId: string, entryId: string): Promise<unknown> {
    const row = await db.row<{ after: unknown }>(
      `SELECT after FROM flag_audit_entries WHERE organization_id = $1 AND flag_id = $2 AND id = $3 AND after IS NOT NULL`,
      [organizationId, flagId, entryId],
    );
    return row?.after ?? null;
  }

  /** Newest first, ties broken by id so pages never overlap. */
  async list(
    db: Db,
    organizationId: string,
    filter: AuditFilter & { offset: number; limit: number },
  ): Promise<{ entries: AuditEntry[]; total: number }> {
    const { where, parameters } = whereOf(organizationId, filter);
    const [entries, [{ total }]] = await Promise.all([
      db.rows<AuditEntry>(
        `SELECT ${COLUMNS} FROM flag_audit_entries WHERE ${where} ORDER BY created_at DESC, id DESC
         OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
        [...parameters, filter.offset, filter.limit],
      ),
      db.rows<{ total: number }>(`SELECT count(*)::int AS total FROM flag_audit_entries WHERE ${where}`, parameters),
    ]);
    return { entries, total };
  }

  /**
   * Every matching entry, oldest first, in batches: each batch is one short query that resumes after the last
   * entry of the one before (a keyset cursor, compared on the stored timestamp itself, not its millisecond
   * rounding), so neither the whole result nor a database connection is held while a slow client reads.
   * Entries appended meanwhile come last, as they sort.
   */
  async *batches(db: Db, organizationId: string, filter: AuditFilter, batchSize = EXPORT_BATCH): AsyncGenerator<AuditEntry[]> {
    const { where, parameters } = whereOf(organizationId, filter);
    let after: string | null = null;
    for (;;) {
      const resume: string =
        after === null ? '' : ` AND (created_at, id) > (SELECT created_at, id FROM flag_audit_entries WHERE id = $${parameters.length + 2})`;
      const batch: AuditEntry[] = await db.rows<AuditEntry>(
        `SELECT ${COLUMNS} FROM flag_audit_entries WHERE ${where}${resume} ORDER BY created_at, id LIMIT $${parameters.length + 1}`,
        after === null ? [...parameters, batchSize] : [...parameters, batchSize, after],
      );
      if (batch.length > 0) yield batch;
      if (batch.length < batchSize) return;
      after = batch[batch.length - 1].id;
    }
  }
}

/** Entries read per query of an export. */
const EXPORT_BATCH = 200;

/** Filters of the audit log; each one given narrows it (createdAt in [from, to)). */
export interface AuditFilter {
  flagId?: string;
  action?: string;
  actorType?: string;
  actorId?: string;
  flagKey?: string;
  from?: Date;
  to?: Date;
}

function whereOf(organizationId: string, filter: AuditFilter): { where: string; parameters: unknown[] } {
  const parameters: unknown[] = [organizationId];
  const conditions = ['organization_id = $1'];
  const add = (condition: string, value: unknown) => {
    if (value === undefined) return;
    parameters.push(value);
    conditions.push(`${condition} $${parameters.length}`);
  };
  add('flag_id =', filter.flagId);
  add('action =', filter.action);
  add('actor_type =', filter.actorType);
  add('actor_id =', filter.actorId);
  add('flag_key =', filter.flagKey);
  add('created_at >=', filter.from);
  add('created_at <', filter.to);
  return { where: conditions.join(' AND '), parameters };
}

/** A JSON `null` snapshot is stored as SQL NULL: a creation has no before, a deletion no after, an ordinary write no context. */
function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
