import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations made by their people (decisions.md, "A studio's own deployment"): `created_by` names the signed-in
 * user who made an organization through POST /v1/organizations, so that ORGANIZATIONS_PER_USER can count theirs; NULL
 * for one made by the admin API or the CLI (every organization from before this migration). Users are only ever marked
 * deleted, so the reference holds; the partial index answers the count from that user's organizations alone.
 */
export class OrganizationCreators1796600000000 implements MigrationInterface {
  name = 'OrganizationCreators1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE organizations ADD COLUMN created_by uuid REFERENCES users (id)`);
    await queryRunner.query(`CREATE INDEX organizations_created_by_idx ON organizations (created_by) WHERE created_by IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX organizations_created_by_idx`);
    await queryRunner.query(`ALTER TABLE organizations DROP COLUMN created_by`);
  }
}
