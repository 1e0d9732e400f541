import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../../database/sql';
import { FlagSchedule, ScheduledChange } from './flag-schedule';

const COLUMNS = `id, organization_id AS "organizationId", flag_id AS "flagId", at, change, state, reason,
  created_at AS "createdAt", settled_at AS "settledAt"`;

/**
 * Schedules, scoped by organization everywhere but in the scheduler's claim, which serves every organization;
 * on the `Db` it is given.
 */
@Injectable()
export class FlagSchedulesRepository {
  async insert(db: Db, organizationId: string, flagId: string, at: Date, change: ScheduledChange): Promise<FlagSchedule> {
    const row = await db.row<FlagSchedule>(
      `INSERT INTO flag_schedules (organization_id, flag_id, at, change) VALUES ($1, $2, $3, $4::jsonb) RETURNING ${COLUMNS}`,
      [organizationId, flagId, at, JSON.stringify(change)],
    );
    return row!;
  }

  countPending(db: Db, organizationId: string, flagId: string): Promise<number> {
    return db
      .rows<{ count: number }>(
        `SELECT count(*)::int AS count FROM flag_schedules WHERE organization_id = $1 AND flag_id = $2 AND state = 'pending'`,
        [organizationId, flagId],
      )
      .then(([{ count }]) => count);
  }

  /** The flag's schedules in the order they apply: by `at`, then in the order they were made. */
  async list(
    db: Db,
    organizationId: string,
    flagId: string,
    window: { offset: number; limit: number },
  ): Promise<{ rows: FlagSchedule[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      db.rows<FlagSchedule>(
        `SELECT ${COLUMNS} FROM flag_schedules WHERE organization_id = $1 AND flag_id = $2 ORDER BY at, created_at, id OFFSET $3 LIMIT $4`,
        [organizationId, flagId, window.offset, window.limit],
      ),
      db.rows<{ total: number }>(`SELECT count(*)::int AS total FROM flag_schedules WHERE organization_id = $1 AND flag_id = $2`, [
        organizationId,
        flagId,
      ]),
    ]);
    return { rows, total };
  }

  /**
   * Removes a pending schedule; false when there is none (or it is no longer pending). A schedule the scheduler
   * is applying is row-locked: this waits for that transaction, then finds it applied or failed.
   */
  async cancel(db: Db, organizationId: string, flagId: string, scheduleId: string): Promise<boolean> {
    const rows = await db.rows(
      `DELETE FROM flag_schedules WHERE organization_id = $1 AND flag_id = $2 AND id = $3 AND state = 'pending' RETURNING id`,
      [organizationId, flagId, scheduleId],
    );
    return rows.length > 0;
  }

  /**
   * Locks the next due schedule for the rest of the transaction, skipping rows another instance holds. A
   * schedule waits while an earlier one of the same flag is pending (claimed elsewhere or not), so that two
   * instances catching up never apply one flag's changes out of order.
   */
  claimDue(tx: Transaction, now: Date): Promise<FlagSchedule | null> {
    return tx.row<FlagSchedule>(
      `SELECT ${COLUMNS} FROM flag_schedules s
       WHERE s.state = 'pending' AND s.at <= $1
         AND NOT EXISTS (
           SELECT 1 FROM flag_schedules e
           WHERE e.organization_id = s.organization_id AND e.flag_id = s.flag_id AND e.state = 'pending'
             AND (e.at, e.created_at, e.id) < (s.at, s.created_at, s.id)
         )
       ORDER BY s.at, s.created_at, s.id
       LIMIT 1
       FOR UPDATE SKIP LOCKED`,
      [now],
    );
  }

  async settle(db: Db, scheduleId: string, outcome: { state: 'applied' } | { state: 'failed'; reason: string }, now: Date): Promise<void> {
    await db.rows(`UPDATE flag_schedules SET state = $2, reason = $3, settled_at = $4 WHERE id = $1`, [
      scheduleId,
      outcome.state,
      outcome.state === 'failed' ? outcome.reason.slice(0, 500) : null,
      now,
    ]);
  }

  /** When the earliest pending schedule falls due (an index-only read of the pending rows' index). */
  /**
   * The change feed's source of the earliest pending schedule (ChangeSource.sql): one row, its time or null. Not a
   * change since the last read but the current value, read every time: one step of an index, in the same statement.
   */
  static readonly NEXT_DUE_AT = `SELECT json_build_array((SELECT at FROM flag_schedules WHERE state = 'pending' ORDER BY at LIMIT 1))`;

  async nextDueAt(db: Db): Promise<Date | null> {
    const row = await db.row<{ at: Date }>(`SELECT at FROM flag_schedules WHERE state = 'pending' ORDER BY at LIMIT 1`);
    return row?.at ?? null;
  }

  /** A deleted flag's pending schedules fail, in the deletion's transaction. */
  async failPendingOfFlag(db: Db, organizationId: string, flagId: string, reason: string): Promise<void> {
    await db.rows(
      `UPDATE flag_schedules SET state = 'failed', reason = $3, settled_at = clock_timestamp()
       WHERE organization_id = $1 AND flag_id = $2 AND state = 'pending'`,
      [organizationId, flagId, reason],
    );
  }

  /** Every pending schedule of the organization fails with `reason` (review turned on: they would apply unreviewed). */
  async failPendingOfOrganization(db: Db, organizationId: string, reason: string, now: Date): Promise<number> {
    const rows = await db.rows<{ id: string }>(
      `UPDATE flag_schedules SET state = 'failed', reason = $2, settled_at = $3
       WHERE organization_id = $1 AND state = 'pending' RETURNING id`,
      [organizationId, reason, now],
    );
    return rows.length;
  }
}
