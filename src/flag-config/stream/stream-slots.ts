import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Sql } from '../../database/sql';

/** How long a slot counts without being renewed: the streams of an instance that died stop counting after this. */
export const SLOT_TTL_MS = 60_000;
/** How often an instance renews the slots of its open streams. */
export const SLOT_RENEW_MS = 20_000;

/**
 * The deployment-wide count of a key's open streams (at most MAX_STREAMS_PER_KEY): one row per open stream
 * in `config_stream_slots`, taken by the instance that serves it under a per-key advisory lock, renewed by that
 * instance while the stream runs, deleted when it ends. Times come from the caller (the hub), so tests pass them.
 */
@Injectable()
export class StreamSlots {
  /** This process, in the rows of its streams: one statement renews them all, one deletes them all. */
  readonly instanceId = randomUUID();

  constructor(private readonly sql: Sql) {}

  /**
   * A new slot's id, or null when the key already holds `limit` unexpired slots: one statement, in which
   * `take_config_stream_slot` (migration StreamSlots) serialises the key's takes on an advisory lock.
   */
  async take(keyId: string, limit: number, now: number): Promise<string | null> {
    const id = randomUUID();
    const row = await this.sql.row<{ taken: boolean }>('SELECT take_config_stream_slot($1, $2, $3, $4, $5, $6) AS taken', [
      id,
      keyId,
      this.instanceId,
      new Date(now + SLOT_TTL_MS),
      new Date(now),
      limit,
    ]);
    return row?.taken ? id : null;
  }

  async release(id: string): Promise<void> {
    await this.sql.rows('DELETE FROM config_stream_slots WHERE id = $1', [id]);
  }

  /** Pushes back the expiry of every slot of this instance, and drops the expired slots of any (dead) instance. */
  async renew(now: number): Promise<void> {
    await this.sql.rows('UPDATE config_stream_slots SET expires_at = $2 WHERE instance_id = $1', [this.instanceId, new Date(now + SLOT_TTL_MS)]);
    await this.sql.rows('DELETE FROM config_stream_slots WHERE expires_at <= $1', [new Date(now)]);
  }

  /** Every slot of this instance (shutdown, once its streams have ended). */
  async releaseAll(): Promise<void> {
    await this.sql.rows('DELETE FROM config_stream_slots WHERE instance_id = $1', [this.instanceId]);
  }
}
