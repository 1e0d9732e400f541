import { Injectable } from '@nestjs/common';
import { Db } from '../../database/sql';
import { Role } from '../roles';

/** A live session as authentication needs it: its user and the user's roles, one per organization. */
export interface SessionRecord {
  sessionId: string;
  userId: string;
  /** ms since the epoch. */
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  /** Organization id to role, for every organization the user is a member of now. */
  roles: Record<string, Role>;
}

/** What the change feed reads for the session cache: a session that ended, or a user whose memberships changed. */
export type SessionChange = { sessionId: string } | { userId: string };

const MS = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** Live sessions (not ended, their user not deleted) with their user's current memberships; the caller adds which. */
const LIVE_SESSIONS = `SELECT s.id AS "sessionId", s.user_id AS "userId", ${MS('s.created_at')} AS "createdAt", ${MS('s.last_used_at')} AS "lastUsedAt",
     ${MS('s.expires_at')} AS "expiresAt",
     coalesce((SELECT json_object_agg(m.organization_id, m.role) FROM memberships m
               WHERE m.user_id = s.user_id AND m.left_at IS NULL), '{}'::json) AS roles
   FROM sessions s JOIN users u ON u.id = s.user_id
   WHERE s.ended_at IS NULL AND u.deleted_at IS NULL`;

/**
 * The `sessions` rows (identity's own), and the one read of a session that authentication makes on a cache miss:
 * the session with its user's current memberships (rows of people's tables, read here and never written).
 * Times come from the service's clock, not the database's, so that expiry follows the one clock tests inject.
 */
@Injectable()
export class SessionsRepository {
  /**
   * The change feed's source of session changes (ChangeSource.sql): sessions ended, and users whose memberships
   * changed (joined, left, another role), by a transaction whose id is at least `$1`. A full read needs nothing:
   * the cache starts empty and loads on use.
   */
  static readonly CHANGED_SINCE = `SELECT coalesce(json_agg(change), '[]'::json) FROM (
      SELECT json_build_object('sessionId', id) AS change FROM sessions
        WHERE NOT $2::boolean AND changed_xid >= $1::xid8 AND ended_at IS NOT NULL
      UNION ALL
      SELECT json_build_object('userId', user_id) FROM memberships WHERE NOT $2::boolean AND changed_xid >= $1::xid8
    ) changes`;

  async create(db: Db, userId: string, tokenHash: string, now: number, expiresAt: number): Promise<string> {
    const row = await db.row<{ id: string }>(
      `INSERT INTO sessions (user_id, token_hash, created_at, last_used_at, expires_at)
       VALUES ($1, $2, to_timestamp($3 / 1000.0), to_timestamp($3 / 1000.0), to_timestamp($4 / 1000.0)) RETURNING id`,
      [userId, tokenHash, now, expiresAt],
    );
    return row!.id;
  }

  /** The live session of a token's hash (not ended, its user not deleted), or null. */
  findLive(db: Db, tokenHash: string): Promise<SessionRecord | null> {
    return db.row<SessionRecord>(`${LIVE_SESSIONS} AND s.token_hash = $1`, [tokenHash]);
  }

  /** The sessions of these ids that are still live (the others ended, or their user was deleted). */
  findLiveByIds(db: Db, sessionIds: readonly string[]): Promise<SessionRecord[]> {
    return db.rows<SessionRecord>(`${LIVE_SESSIONS} AND s.id = ANY($1::uuid[])`, [sessionIds]);
  }

  /** Records a use (never moving it back); deliberately leaves changed_xid alone: a use changes nothing a cache holds. */
  async recordUse(db: Db, sessionId: string, now: number): Promise<void> {
    await db.rows(`UPDATE sessions SET last_used_at = greatest(last_used_at, to_timestamp($2 / 1000.0)) WHERE id = $1 AND ended_at IS NULL`, [
      sessionId,
      now,
    ]);
  }

  /** Ends one session; false when it had already ended. */
  async end(db: Db, sessionId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE sessions SET ended_at = clock_timestamp(), changed_xid = pg_current_xact_id() WHERE id = $1 AND ended_at IS NULL RETURNING id`,
      [sessionId],
    );
    return rows.length > 0;
  }

  /** Ends every live session of the user but `exceptSessionId`; answers the ids ended. */
  async endAllOf(db: Db, userId: string, exceptSessionId?: string): Promise<string[]> {
    const rows = await db.rows<{ id: string }>(
      `UPDATE sessions SET ended_at = clock_timestamp(), changed_xid = pg_current_xact_id()
       WHERE user_id = $1 AND ended_at IS NULL AND ($2::uuid IS NULL OR id <> $2::uuid) RETURNING id`,
      [userId, exceptSessionId ?? null],
    );
    return rows.map((row) => row.id);
  }
}
