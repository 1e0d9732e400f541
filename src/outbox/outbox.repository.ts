import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';

/** A row as the worker claims it. */
export interface OutboxRow {
  id: string;
  channel: string;
  payload: unknown;
  /** Claims so far, this one included. */
  attempts: number;
  createdAt: Date;
}

/** Where a row stands, for whoever wrote it (an invitation's delivery state). */
export interface OutboxRowState {
  id: string;
  channel: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

const LAST_ERROR_MAX = 1000;

/**
 * The outbox table (migrations/1796300000000-Outbox.ts). It serves every organization and every channel: its rows
 * are not tenant data but work for the service, and whoever writes one keeps its id.
 */
@Injectable()
export class OutboxRepository {
  /** Writes a row due at once, in the caller's transaction: a rollback leaves nothing to deliver. */
  async insert(tx: Transaction, channel: string, payload: unknown, now: Date): Promise<string> {
    const row = await tx.row<{ id: string }>(
      `INSERT INTO outbox (channel, payload, next_attempt_at, created_at) VALUES ($1, $2::jsonb, $3, $3) RETURNING id`,
      [channel, JSON.stringify(payload), now],
    );
    return row!.id;
  }

  /**
   * Takes up to `limit` due pending rows of the given channels, oldest due first, and leases them: each one's next
   * attempt moves to `leaseUntil` and its attempts go up by one, in this one statement (its own short transaction).
   * Rows another instance is claiming at the same moment are skipped (SKIP LOCKED), and a leased row is not due
   * again until its lease has run out, so one instance at a time sends a row; one whose instance died is taken
   * again after the lease. Rows are chosen by state and time, never by a last-id cursor.
   */
  claimDue(db: Db, channels: readonly string[], now: Date, leaseUntil: Date, limit: number): Promise<OutboxRow[]> {
    return db.rows<OutboxRow>(
      `UPDATE outbox o SET attempts = o.attempts + 1, next_attempt_at = $3
       FROM (
         SELECT id FROM outbox
         WHERE state = 'pending' AND next_attempt_at <= $2 AND channel = ANY($1::text[])
         ORDER BY next_attempt_at
         LIMIT $4
         FOR UPDATE SKIP LOCKED
       ) due
       WHERE o.id = due.id
       RETURNING o.id, o.channel, o.payload, o.attempts, o.created_at AS "createdAt"`,
      [channels, now, leaseUntil, limit],
    );
  }

  /** Delivered: whoever sent it last, the row is done (a late success after another claim still counts). */
  async succeed(db: Db, id: string, now: Date, settledPayload: unknown): Promise<void> {
    await db.rows(
      `UPDATE outbox SET state = 'succeeded', delivered_at = $2, last_error = NULL, payload = COALESCE($3::jsonb, payload)
       WHERE id = $1 AND state = 'pending'`,
      [id, now, settledPayload === undefined ? null : JSON.stringify(settledPayload)],
    );
  }

  /**
   * A failed attempt, tried again at `retryAt`: only while the row is still this attempt's (`attempts`), so that an
   * instance whose lease ran out does not move the schedule of the instance that took the row over.
   */
  async retryLater(db: Db, id: string, attempts: number, retryAt: Date, error: string): Promise<void> {
    await db.rows(`UPDATE outbox SET next_attempt_at = $3, last_error = $4 WHERE id = $1 AND state = 'pending' AND attempts = $2`, [
      id,
      attempts,
      retryAt,
      error.slice(0, LAST_ERROR_MAX),
    ]);
  }

  /** Given up after this attempt (same fencing as retryLater). */
  async fail(db: Db, id: string, attempts: number, error: string, settledPayload: unknown): Promise<void> {
    await db.rows(
      `UPDATE outbox SET state = 'failed', last_error = $3, payload = COALESCE($4::jsonb, payload)
       WHERE id = $1 AND state = 'pending' AND attempts = $2`,
      [id, attempts, error.slice(0, LAST_ERROR_MAX), settledPayload === undefined ? null : JSON.stringify(settledPayload)],
    );
  }

  /** When the earliest pending row of these channels is due (a leased one: when its lease runs out); null for none. */
  async nextDueAt(db: Db, channels: readonly string[]): Promise<Date | null> {
    const row = await db.row<{ at: Date }>(
      `SELECT next_attempt_at AS at FROM outbox WHERE state = 'pending' AND channel = ANY($1::text[]) ORDER BY next_attempt_at LIMIT 1`,
      [channels],
    );
    return row?.at ?? null;
  }

  /**
   * The change feed's source of the same (ChangeSource.sql), for channel names already checked against
   * CHANNEL_NAME (they are written into the statement: a source takes no parameters of its own).
   */
  static nextDueSource(channels: readonly string[]): string {
    const list = channels.map((name) => `'${name}'`).join(', ');
    return channels.length === 0
      ? `SELECT json_build_array(NULL)`
      : `SELECT json_build_array((SELECT next_attempt_at FROM outbox WHERE state = 'pending' AND channel IN (${list}) ORDER BY next_attempt_at LIMIT 1))`;
  }

  state(db: Db, id: string): Promise<OutboxRowState | null> {
    return db.row<OutboxRowState>(
      `SELECT id, channel, state, attempts, next_attempt_at AS "nextAttemptAt", last_error AS "lastError",
              created_at AS "createdAt", delivered_at AS "deliveredAt"
       FROM outbox WHERE id = $1`,
      [id],
    );
  }
}

/** What a channel's name may be (the table's constraint says the same). */
export const CHANNEL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
