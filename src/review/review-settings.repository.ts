import { Injectable } from '@nestjs/common';
import { PagedRows } from '../database/paged-rows';
import { Db, Transaction } from '../database/sql';

/** An organization's review setting (decisions.md, "Change requests (turn 5)"). */
export interface ReviewSetting {
  /** Direct flag writes are refused (403 REVIEW_REQUIRED): changes go through change requests. */
  required: boolean;
  /** Approvals a change request needs, 1-5. */
  approvals: number;
  /** Whether a request's author may approve it. */
  selfApproval: boolean;
}

/** What an organization without a stored setting has: review off. */
export const DEFAULT_REVIEW_SETTING: Readonly<ReviewSetting> = Object.freeze({ required: false, approvals: 1, selfApproval: false });

/** One change of the setting, as the append-only history keeps it. */
export interface ReviewHistoryRow {
  id: string;
  organizationId: string;
  /** The admin who changed it (null only if that user row were ever gone: users are only marked deleted). */
  userId: string | null;
  userName: string | null;
  before: ReviewSetting;
  after: ReviewSetting;
  createdAt: Date;
}

const HISTORY_COLUMNS = `h.id, h.organization_id AS "organizationId", h.user_id AS "userId", u.name AS "userName",
  h.before, h.after, h.created_at AS "createdAt"`;

/**
 * The review setting and its history. `settingOf` runs on whatever it is given: in a flag write's transaction,
 * after that write has taken the organization's row lock (as every flag write and the setting's own change do),
 * it reads the setting that holds until the write commits.
 */
@Injectable()
export class ReviewSettings {
  async settingOf(db: Db, organizationId: string): Promise<ReviewSetting> {
    const row = await db.row<ReviewSetting>(
      `SELECT required, approvals::int AS approvals, self_approval AS "selfApproval"
       FROM organization_review_settings WHERE organization_id = $1`,
      [organizationId],
    );
    return row ?? { ...DEFAULT_REVIEW_SETTING };
  }

  /** Stores the setting and appends its history row, in the caller's transaction (which holds the organization's lock). */
  async store(
    tx: Transaction,
    organizationId: string,
    userId: string,
    before: ReviewSetting,
    after: ReviewSetting,
    at: Date,
  ): Promise<ReviewHistoryRow> {
    await tx.rows(
      `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (organization_id) DO UPDATE SET required = excluded.required, approvals = excluded.approvals,
         self_approval = excluded.self_approval, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      [organizationId, after.required, after.approvals, after.selfApproval, at, userId],
    );
    const [{ id }] = await tx.rows<{ id: string }>(
      `INSERT INTO organization_review_history (organization_id, user_id, before, after, created_at)
       VALUES ($1, $2, $3::jsonb, $4::jsonb, $5) RETURNING id`,
      [organizationId, userId, JSON.stringify(before), JSON.stringify(after), at],
    );
    return (await this.historyEntry(tx, organizationId, id))!;
  }

  async historyEntry(db: Db, organizationId: string, id: string): Promise<ReviewHistoryRow | null> {
    return db.row<ReviewHistoryRow>(
      `SELECT ${HISTORY_COLUMNS} FROM organization_review_history h LEFT JOIN users u ON u.id = h.user_id
       WHERE h.organization_id = $1 AND h.id = $2`,
      [organizationId, id],
    );
  }

  /** Newest first, ties broken by id so pages never overlap. */
  async history(db: Db, organizationId: string, window: { offset: number; limit: number }): Promise<PagedRows<ReviewHistoryRow>> {
    const [rows, [{ total }]] = await Promise.all([
      db.rows<ReviewHistoryRow>(
        `SELECT ${HISTORY_COLUMNS} FROM organization_review_history h LEFT JOIN users u ON u.id = h.user_id
         WHERE h.organization_id = $1 ORDER BY h.created_at DESC, h.id DESC OFFSET $2 LIMIT $3`,
        [organizationId, window.offset, window.limit],
      ),
      db.rows<{ total: number }>(`SELECT count(*)::int AS total FROM organization_review_history WHERE organization_id = $1`, [organizationId]),
    ]);
    return { rows, total };
  }
}
