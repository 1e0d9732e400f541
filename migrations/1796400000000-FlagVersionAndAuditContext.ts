import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trust (decisions.md, "A flag's version" and "Audit entries say why"): a flag's row version, 1 when made and one
 * more on every write, served as its ETag and checked against `If-Match`; and an audit entry's `context` (why the
 * change was made: a restore, a schedule, an import), NULL for an ordinary write. Existing flags start at version 1,
 * existing entries have no context.
 */
export class FlagVersionAndAuditContext1796400000000 implements MigrationInterface {
  name = 'FlagVersionAndAuditContext1796400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE flags ADD COLUMN version integer NOT NULL DEFAULT 1 CONSTRAINT flags_version_positive CHECK (version >= 1)`);
    await queryRunner.query(
      `ALTER TABLE flag_audit_entries ADD COLUMN context jsonb CONSTRAINT flag_audit_entries_context_object CHECK (context IS NULL OR jsonb_typeof(context) = 'object')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE flag_audit_entries DROP COLUMN context`);
    await queryRunner.query(`ALTER TABLE flags DROP COLUMN version`);
  }
}
