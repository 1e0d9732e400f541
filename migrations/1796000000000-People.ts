import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People (README, "People and sessions"): users, their memberships of organizations with a role, invitations and
 * sessions.
 * - A user is never deleted, only marked `deleted_at` (their sessions and memberships end with it), so that the audit
 *   log and the former members' list can still name them; their email is free again for a new user. Emails are unique
 *   compared case-insensitively among users that exist.
 * - A membership is one row per user and organization; leaving sets `left_at` (the former members' list), joining
 *   again clears it.
 * - Invitations and sessions store only the SHA-256 of their random tokens.
 * - `changed_xid` on sessions, memberships and users is what the change feed reads (the migration ChangeFeed says how):
 *   an ended session, a changed or ended membership, a deleted user or a changed password reaches every instance's
 *   session cache within the feed's period even when the bus lost its message.
 */
export class People1796000000000 implements MigrationInterface {
  name = 'People1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        password_hash text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        deleted_at timestamptz,
        changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE deleted_at IS NULL`);
    await queryRunner.query(`CREATE INDEX users_changed_xid_idx ON users (changed_xid)`);
    await queryRunner.query(`CREATE INDEX users_created_at_idx ON users (created_at DESC, id DESC) WHERE deleted_at IS NULL`);

    await queryRunner.query(`
      CREATE TABLE memberships (
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id),
        role text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        left_at timestamptz,
        changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        PRIMARY KEY (organization_id, user_id)
      )`);
    await queryRunner.query(`CREATE INDEX memberships_user_id_idx ON memberships (user_id)`);
    await queryRunner.query(`CREATE INDEX memberships_changed_xid_idx ON memberships (changed_xid)`);

    await queryRunner.query(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
        role text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
        token_hash text NOT NULL UNIQUE,
        invited_by uuid REFERENCES users (id),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        accepted_by uuid REFERENCES users (id),
        withdrawn_at timestamptz,
        CHECK (accepted_at IS NULL OR withdrawn_at IS NULL)
      )`);
    await queryRunner.query(
      `CREATE INDEX invitations_pending_idx ON invitations (organization_id, created_at) WHERE accepted_at IS NULL AND withdrawn_at IS NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users (id),
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        ended_at timestamptz,
        changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        CHECK (expires_at > created_at)
      )`);
    await queryRunner.query(`CREATE INDEX sessions_user_id_idx ON sessions (user_id) WHERE ended_at IS NULL`);
    await queryRunner.query(`CREATE INDEX sessions_changed_xid_idx ON sessions (changed_xid)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sessions`);
    await queryRunner.query(`DROP TABLE invitations`);
    await queryRunner.query(`DROP TABLE memberships`);
    await queryRunner.query(`DROP TABLE users`);
  }
}
