import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Live operations (README, "Live operations" under API notes):
 * - flag_schedules: a change to apply to a flag at a given instant (two at one instant: in the order they were made). The scheduler claims due rows with
 *   `FOR UPDATE SKIP LOCKED` through the partial index of pending rows, so instances never apply one twice.
 *   A schedule outlives its flag (no foreign key to flags): a deleted flag's pending schedules become `failed`
 *   and stay readable by id. They go with their organization.
 * - The audit filters (action, actor, flag key, time range): each walks an index that starts with the
 *   organization and ends in the log's order, so a filtered page or an export reads only matching entries.
 */
export class LiveOperations1795700000000 implements MigrationInterface {
  name = 'LiveOperations1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE flag_schedules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        flag_id uuid NOT NULL,
        at timestamptz NOT NULL,
        change jsonb NOT NULL CHECK (jsonb_typeof(change) = 'object' AND change <> '{}'::jsonb),
        state varchar(16) NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'failed')),
        reason varchar(500),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        settled_at timestamptz,
        CHECK ((state = 'failed') = (reason IS NOT NULL)),
        CHECK ((state = 'pending') = (settled_at IS NULL))
      )`);
    await queryRunner.query(`CREATE INDEX flag_schedules_due_idx ON flag_schedules (at, created_at, id) WHERE state = 'pending'`);
    await queryRunner.query(`CREATE INDEX flag_schedules_flag_idx ON flag_schedules (organization_id, flag_id, at, created_at, id)`);

    await queryRunner.query(`CREATE INDEX flag_audit_entries_action_idx ON flag_audit_entries (organization_id, action, created_at DESC, id DESC)`);
    await queryRunner.query(
      `CREATE INDEX flag_audit_entries_actor_idx ON flag_audit_entries (organization_id, actor_type, actor_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX flag_audit_entries_flag_key_idx ON flag_audit_entries (organization_id, flag_key, created_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX flag_audit_entries_flag_key_idx`);
    await queryRunner.query(`DROP INDEX flag_audit_entries_actor_idx`);
    await queryRunner.query(`DROP INDEX flag_audit_entries_action_idx`);
    await queryRunner.query(`DROP TABLE flag_schedules`);
  }
}
