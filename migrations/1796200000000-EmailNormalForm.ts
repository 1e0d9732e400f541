import { domainToASCII } from 'node:url';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One email, one spelling (decisions.md, "Trust"): users' and invitations' emails are rewritten into the normal form
 * the service now reads every email in (src/people/email-address.ts), and the unique index on `lower(email)` becomes a
 * plain one, so that an email is stored and compared exactly. PostgreSQL's `lower()` folds `İ` (U+0130) to `i` on some
 * clusters, which let `alİce@a.example` sign in as `alice@a.example`.
 *
 * When two live users would end up with one email, the migration stops and names them (an operator decides which one
 * keeps it, e.g. by deleting the other with the admin API); it runs in one transaction, so nothing is half done. A
 * user whose email has no normal form stops it the same way; a pending invitation whose email has none is withdrawn
 * (nobody could accept it as that email any more).
 */
export class EmailNormalForm1796200000000 implements MigrationInterface {
  name = 'EmailNormalForm1796200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const users = (await queryRunner.query(`SELECT id, email, deleted_at IS NOT NULL AS deleted FROM users ORDER BY created_at, id`)) as {
      id: string;
      email: string;
      deleted: boolean;
    }[];
    const problems: string[] = [];
    const liveByEmail = new Map<string, { id: string; email: string }[]>();
    const rewrites: { id: string; email: string }[] = [];
    for (const user of users) {
      const normal = normalForm(user.email);
      if (normal === null) {
        problems.push(
          `user ${user.id} (${user.email}) has an email with no normal form (not an email address, or its domain cannot be converted to ASCII)`,
        );
        continue;
      }
      if (normal !== user.email) rewrites.push({ id: user.id, email: normal });
      if (user.deleted) continue;
      const same = liveByEmail.get(normal) ?? [];
      same.push(user);
      liveByEmail.set(normal, same);
    }
    for (const [normal, same] of liveByEmail) {
      if (same.length > 1)
        problems.push(`users ${same.map((user) => `${user.id} (${user.email})`).join(' and ')} would all have the email ${normal}`);
    }
    if (problems.length > 0) {
      throw new Error(
        `Emails cannot be given their one spelling: ${problems.join('; ')}. Nothing was changed. Delete or rename all but one of each ` +
          '(DELETE /v1/admin/users/{userId}, or an UPDATE of users.email), then migrate again.',
      );
    }

    await queryRunner.query(`DROP INDEX users_email_key`);
    if (rewrites.length > 0) {
      await queryRunner.query(
        `UPDATE users u SET email = r.email, changed_xid = pg_current_xact_id()
         FROM unnest($1::uuid[], $2::text[]) AS r (id, email) WHERE u.id = r.id`,
        [rewrites.map((rewrite) => rewrite.id), rewrites.map((rewrite) => rewrite.email)],
      );
    }
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_key ON users (email) WHERE deleted_at IS NULL`);

    const invitations = (await queryRunner.query(`SELECT id, email, accepted_at IS NULL AND withdrawn_at IS NULL AS pending FROM invitations`)) as {
      id: string;
      email: string;
      pending: boolean;
    }[];
    const invitationRewrites: { id: string; email: string }[] = [];
    const withdrawn: string[] = [];
    for (const invitation of invitations) {
      const normal = normalForm(invitation.email);
      if (normal === null) {
        if (invitation.pending) withdrawn.push(invitation.id);
      } else if (normal !== invitation.email) {
        invitationRewrites.push({ id: invitation.id, email: normal });
      }
    }
    if (invitationRewrites.length > 0) {
      await queryRunner.query(`UPDATE invitations i SET email = r.email FROM unnest($1::uuid[], $2::text[]) AS r (id, email) WHERE i.id = r.id`, [
        invitationRewrites.map((rewrite) => rewrite.id),
        invitationRewrites.map((rewrite) => rewrite.email),
      ]);
    }
    if (withdrawn.length > 0)
      await queryRunner.query(`UPDATE invitations SET withdrawn_at = clock_timestamp() WHERE id = ANY($1::uuid[])`, [withdrawn]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The spellings replaced are not kept: going down only brings back the case-insensitive index.
    await queryRunner.query(`DROP INDEX users_email_key`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE deleted_at IS NULL`);
  }
}

/**
 * The normal form as src/people/email-address.ts (normalEmail) makes it when this migration was written, kept here
 * because a migration must not change when the service's code does (the migration's test checks that both agree),
 * and within the column's 254 characters.
 */
function normalForm(raw: string): string | null {
  const email = raw.trim().normalize('NFC');
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const domain = domainToASCII(email.slice(at + 1));
  if (domain === '') return null;
  const normal = `${email.slice(0, at).replace(/[A-Z]+/g, (letters) => letters.toLowerCase())}@${domain.toLowerCase()}`;
  return normal.length <= 254 ? normal : null;
}
