import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change request mail (decisions.md, "Change requests (turn 5)", Listing and hearing): each person may turn off the
 * mails about change requests (`PATCH /v1/auth/me {reviewMail}`). On by default: every user from before this
 * migration gets them.
 */
export class ReviewMail1797000000000 implements MigrationInterface {
  name = 'ReviewMail1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN review_mail boolean NOT NULL DEFAULT true`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users DROP COLUMN review_mail`);
  }
}
