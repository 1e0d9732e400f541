import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Proof of an email, and single sign-on identities (decisions.md, "Trust", "Proof of an email").
 *
 * `users.email_verified_at`: when the person proved they read the email (or the operator made the user, or a single
 * sign-on provider vouched for it); NULL while nobody has. Existing rows: a user who joined by accepting an invitation
 * as a new account is unverified (whoever held the link chose the password), every other user is verified. No column
 * says how a user was made, so it is read from what acceptance leaves behind: acceptance as a new account creates
 * the user (with the password sent) and marks the invitation accepted by them in one transaction, so the invitation's
 * `accepted_at` is within moments of the user's `created_at` (both clock_timestamp(); a transaction is bounded by the
 * statement timeouts, far below a minute). Someone who already had a user and accepted with their session did so
 * after signing in, normally long after. A user made by single sign-on from a pending invitation also shows that
 * pattern, but without a password (the provider vouched for them: verified). So: unverified = has a password and
 * accepted an invitation within a minute of being created. The rule errs on the side of unverified (an account whose
 * operator-made user accepted an invitation within its first minute; a single sign-on user who set a password since),
 * which costs such a person only that their first single sign-on takes the account over; `verify-user` (CLI) verifies
 * them instead.
 *
 * `user_identities`: a single sign-on identity (the provider's `iss` and `sub`) linked to a user at its first sign-in;
 * from then on it signs into that user whatever email the provider sends. A user has at most one identity per
 * provider. A deleted user's link stays (history) until the identity signs in again.
 */
export class EmailProofAndIdentities1796250000000 implements MigrationInterface {
  name = 'EmailProofAndIdentities1796250000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN email_verified_at timestamptz`);
    await queryRunner.query(`
      UPDATE users u SET email_verified_at = u.created_at
      WHERE NOT (
        u.password_hash IS NOT NULL AND EXISTS (
          SELECT 1 FROM invitations i
          WHERE i.accepted_by = u.id AND i.accepted_at >= u.created_at AND i.accepted_at < u.created_at + interval '1 minute'
        )
      )`);

    await queryRunner.query(`
      CREATE TABLE user_identities (
        issuer text NOT NULL CHECK (char_length(issuer) BETWEEN 1 AND 2048),
        subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
        user_id uuid NOT NULL REFERENCES users (id),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (issuer, subject),
        CONSTRAINT user_identities_one_per_issuer UNIQUE (user_id, issuer)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE user_identities`);
    await queryRunner.query(`ALTER TABLE users DROP COLUMN email_verified_at`);
  }
}
