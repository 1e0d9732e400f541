import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A studio's own deployment (decisions.md, "Allowances"): the flag allowance an operator gives one organization,
 * 1-10,000 flags, or NULL for its level's (FLAGS_ALLOWED_FREE or FLAGS_ALLOWED_SUBSCRIBED, by its subscriptions).
 * Existing organizations keep their level's: NULL.
 */
export class OrganizationFlagAllowance1796500000000 implements MigrationInterface {
  name = 'OrganizationFlagAllowance1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE organizations ADD COLUMN flag_allowance integer
         CONSTRAINT organizations_flag_allowance_range CHECK (flag_allowance BETWEEN 1 AND 10000)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE organizations DROP COLUMN flag_allowance`);
  }
}
