import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The append-only trigger let anyone clear flag_id on an entry of a live flag, detaching its history.
 * The null-out is now allowed only once the flag row is gone, which is exactly when ON DELETE SET NULL
 * performs it (the referenced row is already deleted when the action runs).
 */
export class AuditNullOutOnlyForDeletedFlags1795353831659 implements MigrationInterface {
  name = 'AuditNullOutOnlyForDeletedFlags1795353831659';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION flag_audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE'
           AND OLD.flag_id IS NOT NULL AND NEW.flag_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM flags WHERE id = OLD.flag_id)
           AND (to_jsonb(NEW) - 'flag_id') = (to_jsonb(OLD) - 'flag_id') THEN
          RETURN NEW;
        END IF;
        IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM organizations WHERE id = OLD.organization_id) THEN
          RETURN OLD; -- the organization itself is being removed
        END IF;
        RAISE EXCEPTION 'flag_audit_entries is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION flag_audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE'
           AND OLD.flag_id IS NOT NULL AND NEW.flag_id IS NULL
           AND (to_jsonb(NEW) - 'flag_id') = (to_jsonb(OLD) - 'flag_id') THEN
          RETURN NEW;
        END IF;
        IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM organizations WHERE id = OLD.organization_id) THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'flag_audit_entries is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
  }
}
