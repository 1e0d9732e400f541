import { Injectable } from '@nestjs/common';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';

/** A row as the worker claims it. */
export interface OutboxRow {
  id: string;
  channel: string;
  payload: unknown;
  /** Claims so far, this one included. */
  attempts: number;
  createdAt: Date;
  /** The row's queue (an endpoint), for a channel whose rows go out one at a time in order; null otherwise. */
  orderingKey: string | null;
}

/** Where a row stands, for whoever wrote it (an invitation's delivery state). */
export interface OutboxRowState {
  id: string;
  channel: string;
  state: 'pending' | 'succeeded' | 'failed' | 'skipped';
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
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
  ) {}

  /** Writes a row due at once, in the caller's transaction: a rollback leaves nothing to deliver. */
  async insert(tx: Transaction, channel: string, payload: unknown, now: Date): Promise<string> {
    const row = await tx.row<{ id: string }>(
      `INSERT INTO outbox (channel, payload, next_attempt_at, created_at) VALUES ($1, $2::jsonb, $3, $3) RETURNING id`,
      [channel, JSON.stringify(payload), now],
    );
    return row!.id;
  }

  /**
   * Writes a row at the end of its queue (`key`), in the caller's transaction: due at once when the queue is empty,
   * otherwise waiting (`infinity`) until the row before it settles; `skipped` rows are recorded settled. The queue's
   * lock (a transaction-level advisory lock) is held to the commit, so rows of one queue take their sequence numbers
   * in the order their transactions commit, and a settling row (which takes the same lock) sees every row written
   * before it and makes the next one due.
   */
  async insertOrdered(tx: Transaction, channel: string, key: string, payload: unknown, now: Date, skipped: boolean): Promise<string> {
    await lockQueue(tx, channel, key);
    const row = await tx.row<{ id: string }>(
      `INSERT INTO outbox (channel, payload, created_at, ordering_key, state, next_attempt_at, sequence)
       SELECT $1, $2::jsonb, $3, $4, CASE WHEN $5 THEN 'skipped' ELSE 'pending' END,
              CASE WHEN NOT $5 AND EXISTS (SELECT 1 FROM outbox WHERE channel = $1 AND ordering_key = $4 AND state = 'pending')
                   THEN 'infinity'::timestamptz ELSE $3 END,
              COALESCE((SELECT max(sequence) FROM outbox WHERE channel = $1 AND ordering_key = $4), 0) + 1
       RETURNING id`,
      [channel, JSON.stringify(payload), now, key, skipped],
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
       RETURNING o.id, o.channel, o.payload, o.attempts, o.created_at AS "createdAt", o.ordering_key AS "orderingKey"`,
      [channels, now, leaseUntil, limit],
    );
  }

  /** Delivered: whoever sent it last, the row is done (a late success after another claim still counts). */
  succeed(row: OutboxRow, now: Date, settledPayload: unknown): Promise<void> {
    return this.settle(row, now, (db) =>
      db.rows<{ id: string }>(
        `UPDATE outbox SET state = 'succeeded', delivered_at = $2, last_error = NULL, payload = COALESCE($3::jsonb, payload)
         WHERE id = $1 AND state = 'pending' RETURNING id`,
        [row.id, now, settledPayload === undefined ? null : JSON.stringify(settledPayload)],
      ),
    );
  }

  /**
   * A failed attempt, tried again at `retryAt`: only while the row is still this attempt's (`attempts`), so that an
   * instance whose lease ran out does not move the schedule of the instance that took the row over. The row stays
   * the head of its queue, if it has one.
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
  fail(row: OutboxRow, error: string, settledPayload: unknown, now: Date): Promise<void> {
    return this.settle(row, now, (db) =>
      db.rows<{ id: string }>(
        `UPDATE outbox SET state = 'failed', last_error = $3, payload = COALESCE($4::jsonb, payload)
         WHERE id = $1 AND state = 'pending' AND attempts = $2 RETURNING id`,
        [row.id, row.attempts, error.slice(0, LAST_ERROR_MAX), settledPayload === undefined ? null : JSON.stringify(settledPayload)],
      ),
    );
  }

  /** Not sent, for good: the channel found nothing to send it to (an endpoint disabled or deleted since). */
  skip(row: OutboxRow, now: Date): Promise<void> {
    return this.settle(row, now, (db) =>
      db.rows<{ id: string }>(`UPDATE outbox SET state = 'skipped' WHERE id = $1 AND state = 'pending' RETURNING id`, [row.id]),
    );
  }

  /**
   * Every pending row of a queue recorded as skipped (its endpoint was disabled): nothing of it is sent any more, and
   * a row written later starts the queue again.
   */
  async skipQueue(tx: Transaction, channel: string, key: string): Promise<number> {
    await lockQueue(tx, channel, key);
    const rows = await tx.rows(`UPDATE outbox SET state = 'skipped' WHERE channel = $1 AND ordering_key = $2 AND state = 'pending' RETURNING id`, [
      channel,
      key,
    ]);
    return rows.length;
  }

  /** A queue's rows gone with what they were for (a deleted endpoint). */
  async deleteQueue(tx: Transaction, channel: string, key: string): Promise<void> {
    await lockQueue(tx, channel, key);
    await tx.rows(`DELETE FROM outbox WHERE channel = $1 AND ordering_key = $2`, [channel, key]);
  }

  /**
   * Settles a row by `update` (which answers the rows it changed); a row of a queue does so under the queue's lock,
   * and, when it did settle, makes the next row of its queue due.
   */
  private async settle(row: OutboxRow, now: Date, update: (db: Db) => Promise<{ id: string }[]>): Promise<void> {
    if (row.orderingKey === null) {
      await update(this.sql);
      return;
    }
    const key = row.orderingKey;
    await this.transactions.run(async (tx) => {
      await lockQueue(tx, row.channel, key);
      const settled = await update(tx);
      if (settled.length === 0) return;
      await tx.rows(
        `UPDATE outbox SET next_attempt_at = $3
         WHERE id = (SELECT id FROM outbox WHERE channel = $1 AND ordering_key = $2 AND state = 'pending' ORDER BY sequence LIMIT 1)
           AND next_attempt_at = 'infinity'`,
        [row.channel, key, now],
      );
    });
  }

  /** When the earliest pending row of these channels is due (a leased one: when its lease runs out); null for none. */
  async nextDueAt(db: Db, channels: readonly string[]): Promise<Date | null> {
    const row = await db.row<{ at: Date }>(
      `SELECT next_attempt_at AS at FROM outbox
       WHERE state = 'pending' AND channel = ANY($1::text[]) AND next_attempt_at < 'infinity' ORDER BY next_attempt_at LIMIT 1`,
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
      : `SELECT json_build_array((SELECT next_attempt_at FROM outbox WHERE state = 'pending' AND channel IN (${list}) AND next_attempt_at < 'infinity' ORDER BY next_attempt_at LIMIT 1))`;
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

/** A queue's lock, held to the end of the transaction: writers of a queue and the row settling at its head take turns. */
async function lockQueue(tx: Transaction, channel: string, key: string): Promise<void> {
  await tx.rows(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`outbox:${channel}:${key}`]);
}

/** What a channel's name may be (the table's constraint says the same). */
export const CHANNEL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
