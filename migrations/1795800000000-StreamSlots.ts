import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key may hold 20 open change streams across the deployment (decisions.md "Change stream (push)"), not 20 on
 * each instance: each open stream has a row here, written by the instance serving it and renewed by it while it
 * runs, so that the streams of an instance that died without closing them stop counting once `expires_at` passes.
 * Unlogged: a row describes a live connection, which a crash of PostgreSQL ends anyway, and an open or a close
 * is not worth a WAL flush.
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
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE config_stream_slots`);
  }
}
