import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Links the service mails (decisions.md, "Trust", Mail; Password reset and verification; Proof of an email).
 *
 * `invitations.mail_id`: the outbox row of the mail that carried the invitation's current link; NULL when the link
 * was answered to the inviter instead (mail off, and every invitation from before this migration). An invitation
 * whose link was mailed proves, once accepted, that its acceptor read the address. Not a foreign key: the outbox is
 * the mail's, and what it keeps of a row is its own business.
 *
 * `email_tokens`: the single-use links mailed for a password reset or an email verification. Only the SHA-256 of a
 * token (256 random bits) is stored; the row names the user and the address it went to, when it stops working, and
 * when it was used.
 */
export class MailLinks1796350000000 implements MigrationInterface {
  name = 'MailLinks1796350000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE invitations ADD COLUMN mail_id uuid`);
    await queryRunner.query(`
      CREATE TABLE email_tokens (
        token_hash text PRIMARY KEY CONSTRAINT email_tokens_hash_form CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        purpose text NOT NULL CONSTRAINT email_tokens_purpose CHECK (purpose IN ('password-reset', 'verify-email')),
        user_id uuid NOT NULL REFERENCES users (id),
        email text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        CONSTRAINT email_tokens_expire_after_creation CHECK (expires_at > created_at)
      )`);
    await queryRunner.query(`CREATE INDEX email_tokens_user ON email_tokens (user_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE email_tokens`);
    await queryRunner.query(`ALTER TABLE invitations DROP COLUMN mail_id`);
  }
}
