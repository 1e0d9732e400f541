import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations, API keys, subscriptions, flags and the flag audit log.
 * Rules that the data must keep whatever the code does live here: enums as checks, the key format,
 * one key per organization, and an audit log that only ever grows.
 */
export class Init1795351584288 implements MigrationInterface {
  name = 'Init1795351584288';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL CHECK (length(name) >= 1),
        storage_allocation bigint NOT NULL CHECK (storage_allocation >= 0),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name varchar(100) NOT NULL CHECK (length(name) >= 1),
        key_hash char(64) NOT NULL UNIQUE,
        permissions text[] NOT NULL CHECK (
          cardinality(permissions) > 0
          AND permissions <@ ARRAY['FLAGS_READ', 'FLAGS_WRITE', 'STORAGE_READ', 'STORAGE_WRITE']::text[]
        ),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        revoked_at timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX api_keys_organization_idx ON api_keys (organization_id)`);

    await queryRunner.query(`
      CREATE TABLE subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        plan varchar(100) NOT NULL CHECK (length(plan) >= 1),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled')),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        cancelled_at timestamptz,
        CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
      )`);
    await queryRunner.query(`CREATE INDEX subscriptions_active_idx ON subscriptions (organization_id) WHERE status = 'active'`);

    await queryRunner.query(`
      CREATE TABLE flags (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        key varchar(64) NOT NULL CHECK (key ~ '^[a-z0-9][a-z0-9_-]*$'),
        name varchar(100) NOT NULL CHECK (length(name) >= 1),
        description varchar(500),
        type varchar(16) NOT NULL CHECK (type IN ('boolean', 'string', 'number', 'json')),
        value jsonb NOT NULL,
        runtime varchar(16) NOT NULL DEFAULT 'shared' CHECK (runtime IN ('shared', 'server')),
        archived boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT flags_organization_key_unique UNIQUE (organization_id, key),
        CHECK (
          (type = 'boolean' AND jsonb_typeof(value) = 'boolean')
          OR (type = 'string' AND jsonb_typeof(value) = 'string')
          OR (type = 'number' AND jsonb_typeof(value) = 'number')
          OR type = 'json'
        )
      )`);
    // Lock ranking (creation time, then id) and the newest-first list both walk this index.
    await queryRunner.query(`CREATE INDEX flags_organization_created_idx ON flags (organization_id, created_at, id)`);

    await queryRunner.query(`
      CREATE TABLE flag_audit_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        flag_id uuid REFERENCES flags (id) ON DELETE SET NULL,
        flag_key varchar(64),
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('session', 'apiKey', 'system')),
        actor_id varchar(100),
        action varchar(32) NOT NULL CHECK (action IN (
          'flag.create', 'flag.update', 'flag.value.set', 'flag.runtime.set',
          'flag.archive', 'flag.unarchive', 'flag.delete'
        )),
        before jsonb,
        after jsonb,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK ((actor_type = 'system') = (actor_id IS NULL))
      )`);
    await queryRunner.query(`CREATE INDEX flag_audit_entries_organization_idx ON flag_audit_entries (organization_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX flag_audit_entries_flag_idx ON flag_audit_entries (organization_id, flag_id, created_at DESC, id DESC)`);

    // Append-only: the one change allowed is the flag_id null-out done by ON DELETE SET NULL
    // (narrowed to deleted flags by AuditNullOutOnlyForDeletedFlags).
    await queryRunner.query(`
      CREATE FUNCTION flag_audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE'
           AND OLD.flag_id IS NOT NULL AND NEW.flag_id IS NULL
           AND (to_jsonb(NEW) - 'flag_id') = (to_jsonb(OLD) - 'flag_id') THEN
          RETURN NEW;
        END IF;
        IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM organizations WHERE id = OLD.organization_id) THEN
          RETURN OLD; -- the organization itself is being removed
        END IF;
        RAISE EXCEPTION 'flag_audit_entries is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER flag_audit_entries_append_only
      BEFORE UPDATE OR DELETE ON flag_audit_entries
      FOR EACH ROW EXECUTE FUNCTION flag_audit_entries_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE flag_audit_entries`);
    await queryRunner.query(`DROP FUNCTION flag_audit_entries_append_only()`);
    await queryRunner.query(`DROP TABLE flags`);
    await queryRunner.query(`DROP TABLE subscriptions`);
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE organizations`);
  }
}
