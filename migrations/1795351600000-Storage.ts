import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * File storage: one row per stored (or reserved) file, and the consumed nonces of non-allocated upload URLs.
 * The row is the source of truth for whether a file exists; bytes live in the object store under
 * `object_key`, and a periodic sweep removes objects that have no row.
 */
export class Storage1795351600000 implements MigrationInterface {
  name = 'Storage1795351600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE storage_items (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        kind varchar(16) NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'document')),
        size bigint NOT NULL CHECK (size >= 0),
        content_type varchar(255) NOT NULL CHECK (length(content_type) >= 3),
        state varchar(16) NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'complete')),
        metadata jsonb CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object'),
        object_key varchar(300) NOT NULL UNIQUE,
        checksum char(64),
        upload_expires_at timestamptz,
        upload_claimed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz,
        CHECK ((state = 'complete') = (completed_at IS NOT NULL)),
        CHECK ((state = 'complete') = (checksum IS NOT NULL)),
        CHECK (state = 'complete' OR upload_expires_at IS NOT NULL)
      )`);
    // The newest-first list (optionally by kind) and the purge filters (kind, created_at range) walk these.
    await queryRunner.query(`CREATE INDEX storage_items_organization_created_idx ON storage_items (organization_id, created_at DESC, id DESC)`);
    await queryRunner.query(
      `CREATE INDEX storage_items_organization_kind_created_idx ON storage_items (organization_id, kind, created_at DESC, id DESC)`,
    );
    // Statistics sum complete items per kind.
    await queryRunner.query(
      `CREATE INDEX storage_items_complete_idx ON storage_items (organization_id, kind) INCLUDE (size) WHERE state = 'complete'`,
    );
    // The sweeper looks for pending items whose upload URL has expired.
    await queryRunner.query(`CREATE INDEX storage_items_pending_expiry_idx ON storage_items (upload_expires_at) WHERE state = 'pending'`);

    // A non-allocated URL has no row until its upload completes; its nonce is claimed here when an upload
    // starts, so two uploads to one URL cannot both succeed. Rows are kept until the URL has expired.
    await queryRunner.query(`
      CREATE TABLE storage_upload_nonces (
        nonce uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX storage_upload_nonces_expiry_idx ON storage_upload_nonces (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE storage_upload_nonces`);
    await queryRunner.query(`DROP TABLE storage_items`);
  }
}
