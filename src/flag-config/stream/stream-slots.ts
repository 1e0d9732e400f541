import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Sql } from '../../database/sql';

/** How long a slot counts without being renewed: the streams of an instance that died stop counting after this. */
export const SLOT_TTL_MS = 60_000;
/** How often an instance renews the slots of its open streams. */
export const SLOT_RENEW_MS = 20_000;
/** The first key of the advisory lock that serialises takes of one API key's slots (the second is the key's hash). */
const SLOT_LOCK_SPACE = 73110204;

/**
 * The deployment-wide count of a key's open streams (decisions.md: at most 20 per key): one row per open stream
 * in `config_stream_slots`, taken by the instance that serves it under a per-key advisory lock, renewed by that
 * instance while the stream runs, deleted when it ends. Times come from the caller (the hub), so tests pass them.
 */
@Injectable()
export class StreamSlots {
  /** This process, in the rows of its streams: one statement renews them all, one deletes them all. */
  readonly instanceId = randomUUID();

  constructor(
    private readonly sql: Sql,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /** A new slot's id, or null when the key already holds `limit` unexpired slots. */
  take(keyId: string, limit: number, now: number): Promise<string | null> {
    return this.txHost.withTransaction(async () => {
      await this.sql.rows('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [SLOT_LOCK_SPACE, keyId]);
      await this.sql.rows('DELETE FROM config_stream_slots WHERE key_id = $1 AND expires_at <= $2', [keyId, new Date(now)]);
      const id = randomUUID();
      const taken = await this.sql.rows<{ id: string }>(
        `INSERT INTO config_stream_slots (id, key_id, instance_id, expires_at)
         SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM config_stream_slots WHERE key_id = $2) < $5
         RETURNING id`,
        [id, keyId, this.instanceId, new Date(now + SLOT_TTL_MS), limit],
      );
      return taken.length > 0 ? id : null;
    });
  }

  async release(id: string): Promise<void> {
    await this.sql.rows('DELETE FROM config_stream_slots WHERE id = $1', [id]);
  }

  /** Pushes back the expiry of every slot of this instance. */
  async renew(now: number): Promise<void> {
    await this.sql.rows('UPDATE config_stream_slots SET expires_at = $2 WHERE instance_id = $1', [this.instanceId, new Date(now + SLOT_TTL_MS)]);
  }

  /** Every slot of this instance (shutdown, once its streams have ended). */
  async releaseAll(): Promise<void> {
    await this.sql.rows('DELETE FROM config_stream_slots WHERE instance_id = $1', [this.instanceId]);
  }
}
