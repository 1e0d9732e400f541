import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key may hold 20 open change streams across the deployment (README, "Change stream"), not 20 on
 * each instance: each open stream has a row here, written by the instance serving it and renewed by it while it
 * runs, so that the streams of an instance that died without closing them stop counting once `expires_at` passes.
 * Unlogged: a row describes a live connection, which a crash of PostgreSQL ends anyway, and an open or a close
 * is not worth a WAL flush.
 *
 * `take_config_stream_slot` takes a slot in one round trip: it serialises the takes of one key on an advisory
 * lock, then counts and inserts. Being VOLATILE, each of its statements reads a fresh snapshot (READ COMMITTED),
 * so the count sees every slot committed by a take that held the lock before it. It runs with the caller's
 * privileges: the service role's DML on the table is all it needs.
 */
export class StreamSlots1795800000000 implements MigrationInterface {
  name = 'StreamSlots1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE config_stream_slots (
        id uuid PRIMARY KEY,
        key_id uuid NOT NULL,
        instance_id uuid NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX config_stream_slots_key_idx ON config_stream_slots (key_id)`);
    await queryRunner.query(`CREATE INDEX config_stream_slots_instance_idx ON config_stream_slots (instance_id)`);
    await queryRunner.query(`
      CREATE FUNCTION take_config_stream_slot(slot_id uuid, slot_key_id uuid, slot_instance_id uuid, slot_expires_at timestamptz, at timestamptz, slot_limit integer)
      RETURNS boolean
      LANGUAGE plpgsql VOLATILE
      AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(73110204, hashtext(slot_key_id::text));
        IF (SELECT count(*) FROM config_stream_slots WHERE key_id = slot_key_id AND expires_at > at) >= slot_limit THEN
          RETURN false;
        END IF;
        INSERT INTO config_stream_slots (id, key_id, instance_id, expires_at) VALUES (slot_id, slot_key_id, slot_instance_id, slot_expires_at);
        RETURN true;
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION take_config_stream_slot(uuid, uuid, uuid, timestamptz, timestamptz, integer)`);
    await queryRunner.query(`DROP TABLE config_stream_slots`);
  }
}
