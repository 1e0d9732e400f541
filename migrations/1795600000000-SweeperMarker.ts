import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The storage sweeper's orphan scan reads one page of the object store's listing per run and resumes after the
 * last key it examined, so that a run's cost does not grow with the store. That key is kept here, one row per
 * scan (`orphan-scan`), so that it survives restarts and every instance resumes from the same place; no row means
 * the next scan starts from the beginning. The service role gets its DML through grantServiceRole, like every table.
 */
export class SweeperMarker1795600000000 implements MigrationInterface {
  name = 'SweeperMarker1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE storage_sweep_state (
        name text PRIMARY KEY,
        marker text NOT NULL CHECK (marker <> ''),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE storage_sweep_state`);
  }
}
