import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';
import { ImportReportDto } from '../flags/dto/flag-transfer.dto';
import { FlagSnapshot } from '../flags/flag.model';
import { ChangeRequestState } from './change-request-state';

export interface ChangeRequestRow {
  id: string;
  organizationId: string;
  title: string;
  description: string | null;
  state: ChangeRequestState;
  revision: number;
  authorType: 'session' | 'apiKey';
  authorId: string;
  authorName: string;
  applyAt: Date | null;
  overrideReason: string | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  appliedAt: Date | null;
  /** A request made of an import: the import's dry-run report. */
  importReport: ImportReportDto | null;
}

export interface ChangeRow {
  key: string;
  flagId: string | null;
  before: FlagSnapshot | null;
  after: FlagSnapshot | null;
  version: number | null;
}

export interface ReviewRow {
  userId: string;
  userName: string;
  decision: 'approve' | 'decline';
  comment: string | null;
  createdAt: Date;
}

export type TimelineKind = 'opened' | 'edited' | 'approved' | 'declined' | 'applied' | 'withdrawn' | 'failed';

export interface EventRow {
  kind: TimelineKind;
  actorType: 'session' | 'apiKey' | 'system';
  actorId: string | null;
  actorName: string | null;
  details: { reason?: string; override?: boolean } | null;
  createdAt: Date;
}

export interface ActorRef {
  type: 'session' | 'apiKey' | 'system';
  id: string | null;
  name: string | null;
}

/** The request's columns as ChangeRequestRow names, of table alias `t`. */
const columnsOf = (t: string) => `${t}.id, ${t}.organization_id AS "organizationId", ${t}.title, ${t}.description, ${t}.state, ${t}.revision,
  ${t}.author_type AS "authorType", ${t}.author_id AS "authorId", ${t}.author_name AS "authorName", ${t}.apply_at AS "applyAt",
  ${t}.override_reason AS "overrideReason", ${t}.failure_reason AS "failureReason", ${t}.created_at AS "createdAt",
  ${t}.updated_at AS "updatedAt", ${t}.applied_at AS "appliedAt", ${t}.import_report AS "importReport"`;
const COLUMNS = columnsOf('change_requests');

/** Change requests, their changes, reviews and timeline; every read names the organization. */
@Injectable()
export class ChangeRequestsRepository {
  async insert(
    tx: Transaction,
    organizationId: string,
    fields: { title: string; description: string | null; author: ActorRef; applyAt: Date | null; importReport?: ImportReportDto; at: Date },
  ): Promise<ChangeRequestRow> {
    return (await tx.row<ChangeRequestRow>(
      `INSERT INTO change_requests (organization_id, title, description, author_type, author_id, author_name, apply_at, import_report, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $9) RETURNING ${COLUMNS}`,
      [
        organizationId,
        fields.title,
        fields.description,
        fields.author.type,
        fields.author.id,
        fields.author.name ?? '',
        fields.applyAt,
        fields.importReport === undefined ? null : JSON.stringify(fields.importReport),
        fields.at,
      ],
    ))!;
  }

  find(db: Db, organizationId: string, id: string): Promise<ChangeRequestRow | null> {
    return db.row<ChangeRequestRow>(`SELECT ${COLUMNS} FROM change_requests WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
  }

  /** The request, row-locked until `tx` ends: its edits, reviews and applies take turns. */
  findForUpdate(tx: Transaction, organizationId: string, id: string): Promise<ChangeRequestRow | null> {
    return tx.row<ChangeRequestRow>(`SELECT ${COLUMNS} FROM change_requests WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [organizationId, id]);
  }

  async update(
    tx: Transaction,
    id: string,
    fields: Partial<
      Pick<ChangeRequestRow, 'title' | 'description' | 'state' | 'revision' | 'overrideReason' | 'failureReason' | 'appliedAt' | 'applyAt'>
    > & {
      updatedAt: Date;
    },
  ): Promise<void> {
    const columns: Record<string, string> = {
      title: 'title',
      description: 'description',
      state: 'state',
      revision: 'revision',
      overrideReason: 'override_reason',
      failureReason: 'failure_reason',
      appliedAt: 'applied_at',
      applyAt: 'apply_at',
      updatedAt: 'updated_at',
    };
    const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
    const sets = entries.map(([field], index) => `${columns[field]} = $${index + 2}`);
    await tx.rows(`UPDATE change_requests SET ${sets.join(', ')} WHERE id = $1`, [id, ...entries.map(([, value]) => value)]);
  }

  /** Replaces the request's changes with `changes`, in their order. */
  async replaceChanges(tx: Transaction, id: string, changes: readonly ChangeRow[]): Promise<void> {
    await tx.rows(`DELETE FROM change_request_changes WHERE change_request_id = $1`, [id]);
    if (changes.length === 0) return;
    await tx.rows(
      `INSERT INTO change_request_changes (change_request_id, position, flag_key, flag_id, before, after, flag_version)
       SELECT $1, e.position - 1, e.change->>'key', (e.change->>'flag_id')::uuid, NULLIF(e.change->'before', 'null'::jsonb),
         NULLIF(e.change->'after', 'null'::jsonb), (e.change->>'version')::int
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(change, position)`,
      [
        id,
        JSON.stringify(
          changes.map((change) => ({ key: change.key, flag_id: change.flagId, before: change.before, after: change.after, version: change.version })),
        ),
      ],
    );
  }

  changesOf(db: Db, id: string): Promise<ChangeRow[]> {
    return db.rows<ChangeRow>(
      `SELECT flag_key AS key, flag_id AS "flagId", before, after, flag_version AS version
       FROM change_request_changes WHERE change_request_id = $1 ORDER BY position`,
      [id],
    );
  }

  reviewsOf(db: Db, id: string, revision: number): Promise<ReviewRow[]> {
    return db.rows<ReviewRow>(
      `SELECT user_id AS "userId", user_name AS "userName", decision, comment, created_at AS "createdAt"
       FROM change_request_reviews WHERE change_request_id = $1 AND revision = $2 ORDER BY created_at, id`,
      [id, revision],
    );
  }

  async insertReview(
    tx: Transaction,
    id: string,
    revision: number,
    review: { userId: string; userName: string; decision: 'approve' | 'decline'; comment: string | null; at: Date },
  ): Promise<void> {
    await tx.rows(
      `INSERT INTO change_request_reviews (change_request_id, revision, user_id, user_name, decision, comment, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, revision, review.userId, review.userName, review.decision, review.comment, review.at],
    );
  }

  async appendEvent(
    tx: Transaction,
    id: string,
    kind: TimelineKind,
    actor: ActorRef,
    at: Date,
    details: { reason?: string; override?: boolean } | null = null,
  ): Promise<void> {
    await tx.rows(
      `INSERT INTO change_request_events (change_request_id, kind, actor_type, actor_id, actor_name, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
      [id, kind, actor.type, actor.id, actor.name, details === null ? null : JSON.stringify(details), at],
    );
  }

  eventsOf(db: Db, id: string): Promise<EventRow[]> {
    return db.rows<EventRow>(
      `SELECT kind, actor_type AS "actorType", actor_id AS "actorId", actor_name AS "actorName", details, created_at AS "createdAt"
       FROM change_request_events WHERE change_request_id = $1 ORDER BY id`,
      [id],
    );
  }

  /**
   * A page of the organization's requests, newest first, with the keys they change and the approvals of their current
   * version. `awaiting`: only open requests that this user may review and has not reviewed in this version.
   */
  async list(
    db: Db,
    organizationId: string,
    filter: { state?: ChangeRequestState; awaiting?: { userId: string; selfApproval: boolean } },
    window: { offset: number; limit: number },
  ): Promise<{ rows: (ChangeRequestRow & { keys: string[]; approvals: number })[]; total: number }> {
    const conditions = ['r.organization_id = $1'];
    const parameters: unknown[] = [organizationId];
    if (filter.state !== undefined) {
      parameters.push(filter.state);
      conditions.push(`r.state = $${parameters.length}`);
    }
    if (filter.awaiting !== undefined) {
      parameters.push(filter.awaiting.userId, filter.awaiting.selfApproval);
      const user = `$${parameters.length - 1}`;
      conditions.push(
        `r.state = 'open'`,
        `(${`$${parameters.length}`}::boolean OR NOT (r.author_type = 'session' AND r.author_id = ${user}::uuid))`,
        `NOT EXISTS (SELECT 1 FROM change_request_reviews v WHERE v.change_request_id = r.id AND v.revision = r.revision AND v.user_id = ${user}::uuid)`,
      );
    }
    const where = conditions.join(' AND ');
    const [rows, [{ total }]] = await Promise.all([
      db.rows<ChangeRequestRow & { keys: string[]; approvals: number }>(
        `SELECT ${columnsOf('r')},
           ARRAY(SELECT c.flag_key FROM change_request_changes c WHERE c.change_request_id = r.id ORDER BY c.position) AS keys,
           (SELECT count(*)::int FROM change_request_reviews v WHERE v.change_request_id = r.id AND v.revision = r.revision AND v.decision = 'approve') AS approvals
         FROM change_requests r WHERE ${where} ORDER BY r.created_at DESC, r.id DESC OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
        [...parameters, window.offset, window.limit],
      ),
      db.rows<{ total: number }>(`SELECT count(*)::int AS total FROM change_requests r WHERE ${where}`, parameters),
    ]);
    return { rows, total };
  }

  /** When the earliest approved request is to be applied, for the change feed (a one-element JSON array: the instant or null). */
  static readonly NEXT_DUE_AT = `SELECT json_build_array((SELECT apply_at FROM change_requests WHERE state = 'approved' AND apply_at IS NOT NULL ORDER BY apply_at LIMIT 1))`;

  async nextDueAt(db: Db): Promise<Date | null> {
    const row = await db.row<{ at: Date }>(
      `SELECT apply_at AS at FROM change_requests WHERE state = 'approved' AND apply_at IS NOT NULL ORDER BY apply_at LIMIT 1`,
    );
    return row?.at ?? null;
  }

  /**
   * The earliest approved request due at `now` (any organization), not locked: the scheduled apply claims it by taking
   * its organization's row and then its own (the lock order of every other command) and finding it still approved.
   */
  dueCandidate(db: Db, now: Date): Promise<{ id: string; organizationId: string } | null> {
    return db.row<{ id: string; organizationId: string }>(
      `SELECT id, organization_id AS "organizationId" FROM change_requests
       WHERE state = 'approved' AND apply_at <= $1 ORDER BY apply_at, id LIMIT 1`,
      [now],
    );
  }

  /** A member's name, or an API key's, as the request shows who acted. */
  /**
   * The review setting changed (`approvals`, `selfApproval`): each open or approved request of the organization is
   * open or approved again by the approvals of its current revision that count under the new setting (the author's
   * own only with selfApproval), in the setting's transaction. The console reads them again on the setting's own event.
   */
  async reevaluatePending(tx: Transaction, organizationId: string, rule: { approvals: number; selfApproval: boolean }, at: Date): Promise<void> {
    await tx.rows(
      `UPDATE change_requests r SET state = settled.state, updated_at = $4
       FROM (
         SELECT c.id, CASE WHEN (
             SELECT count(*) FROM change_request_reviews v
             WHERE v.change_request_id = c.id AND v.revision = c.revision AND v.decision = 'approve'
               AND ($3 OR c.author_type <> 'session' OR v.user_id <> c.author_id)
           ) >= $2 THEN 'approved' ELSE 'open' END AS state
         FROM change_requests c
         WHERE c.organization_id = $1 AND c.state IN ('open', 'approved')
         FOR UPDATE OF c
       ) settled
       WHERE r.id = settled.id AND r.state <> settled.state`,
      [organizationId, rule.approvals, rule.selfApproval, at],
    );
  }

  /**
   * Who is mailed about the organization's requests among `userIds` (all its members when null): current members
   * with `roles`, a verified email (an unverified one may not be theirs) and review mail on, each once, by email.
   */
  mailRecipients(
    db: Db,
    organizationId: string,
    roles: readonly string[],
    only: string | null,
  ): Promise<{ id: string; email: string; name: string }[]> {
    return db.rows<{ id: string; email: string; name: string }>(
      `SELECT u.id, u.email, u.name FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = $1 AND m.left_at IS NULL AND m.role = ANY ($2::text[]) AND ($3::uuid IS NULL OR u.id = $3)
         AND u.deleted_at IS NULL AND u.email_verified_at IS NOT NULL AND u.review_mail
       ORDER BY u.email`,
      [organizationId, roles, only],
    );
  }
}
