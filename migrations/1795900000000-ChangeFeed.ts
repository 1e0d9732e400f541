import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the change feed (src/invalidation/change-feed.ts) reads to cover the invalidation bus's lost messages, at a
 * cost that follows changes rather than organizations, keys or polls:
 * - `config_versions`: one row per organization whose flags ever changed, its `version` bumped by every flag change
 *   in the change's own transaction (FlagWriter.record), so that a config payload knows which version it was built
 *   from. Apart from `organizations` on purpose: a flag update locks its flag then this row, never the organization's
 *   row, so it cannot deadlock with a write that locks the organization first and then flags.
 * - `changed_xid` here and on `api_keys` (set when a key is issued and when it is revoked): the id of the
 *   transaction that made the change. A read that remembers its snapshot's xmin (every transaction below it had
 *   ended) finds every change it has not seen yet with `changed_xid >= xmin`, through these indexes.
 */
export class ChangeFeed1795900000000 implements MigrationInterface {
  name = 'ChangeFeed1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE config_versions (
        organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
        version bigint NOT NULL CHECK (version > 0),
        changed_xid xid8 NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX config_versions_changed_xid_idx ON config_versions (changed_xid)`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    await queryRunner.query(`CREATE INDEX api_keys_changed_xid_idx ON api_keys (changed_xid)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX api_keys_changed_xid_idx`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN changed_xid`);
    await queryRunner.query(`DROP TABLE config_versions`);
  }
}
