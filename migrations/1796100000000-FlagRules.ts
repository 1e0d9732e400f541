import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Targeting (decisions.md, "Targeting"): a flag's rules, an ordered list of {id, conditions, value} that the service
 * validates (src/flags/targeting/flag-rules.ts). NULL for a flag without rules, never an empty list, so that a flag
 * without rules is stored, served and audited exactly as before.
 */
export class FlagRules1796100000000 implements MigrationInterface {
  name = 'FlagRules1796100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE flags ADD COLUMN rules jsonb
        CONSTRAINT flags_rules_list CHECK (rules IS NULL OR (jsonb_typeof(rules) = 'array' AND jsonb_array_length(rules) BETWEEN 1 AND 20))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE flags DROP COLUMN rules`);
  }
}
