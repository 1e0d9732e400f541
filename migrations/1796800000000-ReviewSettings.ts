import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change requests (decisions.md, "Change requests (turn 5)"): an organization's review setting, and the history of
 * its changes. No row in organization_review_settings means the default, review off (`required` false, one approval,
 * no self-approval): every organization from before this migration keeps working as before.
 *
 * The history only grows, like the flag audit log: the service's role is granted SELECT and INSERT only
 * (APPEND_ONLY_TABLES, src/database/database-roles.ts), and triggers refuse UPDATE, DELETE and TRUNCATE to anyone,
 * the owner included; the one deletion allowed is the cascade of the organization's own removal.
 *
 * API keys may hold the new permission FLAGS_WRITE_UNREVIEWED (write directly while review is required), only beside
 * FLAGS_WRITE.
 */
export class ReviewSettings1796800000000 implements MigrationInterface {
  name = 'ReviewSettings1796800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_permissions_check`);
    await queryRunner.query(`
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_permissions_check CHECK (
        cardinality(permissions) > 0
        AND permissions <@ ARRAY['FLAGS_READ', 'FLAGS_WRITE', 'STORAGE_READ', 'STORAGE_WRITE', 'FLAGS_WRITE_UNREVIEWED']::text[]
        AND (NOT 'FLAGS_WRITE_UNREVIEWED' = ANY (permissions) OR 'FLAGS_WRITE' = ANY (permissions))
      )`);
    await queryRunner.query(`
      CREATE TABLE organization_review_settings (
        organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
        required boolean NOT NULL,
        approvals smallint NOT NULL CHECK (approvals BETWEEN 1 AND 5),
        self_approval boolean NOT NULL,
        updated_at timestamptz NOT NULL,
        updated_by uuid REFERENCES users (id)
      )`);
    await queryRunner.query(`
      CREATE TABLE organization_review_history (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        user_id uuid REFERENCES users (id),
        before jsonb NOT NULL,
        after jsonb NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX organization_review_history_organization_idx ON organization_review_history (organization_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(`
      CREATE FUNCTION organization_review_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          IF NOT EXISTS (SELECT 1 FROM organizations WHERE id = OLD.organization_id) THEN
            RETURN OLD; -- the organization itself is being removed
          END IF;
        END IF;
        RAISE EXCEPTION 'organization_review_history is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER organization_review_history_append_only
      BEFORE UPDATE OR DELETE ON organization_review_history
      FOR EACH ROW EXECUTE FUNCTION organization_review_history_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER organization_review_history_refuse_truncate
      BEFORE TRUNCATE ON organization_review_history
      FOR EACH STATEMENT EXECUTE FUNCTION organization_review_history_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE organization_review_history`);
    await queryRunner.query(`DROP FUNCTION organization_review_history_append_only()`);
    await queryRunner.query(`DROP TABLE organization_review_settings`);
    await queryRunner.query(`UPDATE api_keys SET permissions = array_remove(permissions, 'FLAGS_WRITE_UNREVIEWED')`);
    await queryRunner.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_permissions_check`);
    await queryRunner.query(`
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_permissions_check CHECK (
        cardinality(permissions) > 0
        AND permissions <@ ARRAY['FLAGS_READ', 'FLAGS_WRITE', 'STORAGE_READ', 'STORAGE_WRITE']::text[]
      )`);
  }
}
