import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The append-only trigger covers UPDATE and DELETE row by row, but TRUNCATE fires no row triggers: it emptied
 * the audit log in one statement, for any role allowed to truncate (the owner and superusers always are).
 * A statement-level BEFORE TRUNCATE trigger refuses it, whoever asks, and also refuses a `TRUNCATE organizations
 * CASCADE` that would reach the log. (Removing an organization row by row is still allowed, as before.)
 */
export class AuditRefusesTruncate1795360000000 implements MigrationInterface {
  name = 'AuditRefusesTruncate1795360000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION flag_audit_entries_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'flag_audit_entries is append-only (TRUNCATE refused)' USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER flag_audit_entries_refuse_truncate
      BEFORE TRUNCATE ON flag_audit_entries
      FOR EACH STATEMENT EXECUTE FUNCTION flag_audit_entries_refuse_truncate()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER flag_audit_entries_refuse_truncate ON flag_audit_entries`);
    await queryRunner.query(`DROP FUNCTION flag_audit_entries_refuse_truncate()`);
  }
}
