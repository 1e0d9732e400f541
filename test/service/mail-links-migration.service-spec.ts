import { randomBytes } from 'node:crypto';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from '../support/database-url';
import { migratedDatabase, migrationClasses } from '../support/migrations';

const THIS_MIGRATION = 1796350000000;

describe('migration MailLinks, on a database with invitations from before it', () => {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const url = databaseUrlFor(adminUrl, name);

  beforeAll(() => withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`)));
  afterAll(() => withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));

  it('keeps every invitation as not mailed (its link was answered), and adds email_tokens holding only hashes', async () => {
    const before = await migratedDatabase(
      url,
      migrationClasses((timestamp) => timestamp < THIS_MIGRATION),
    );
    const q = (sql: string, parameters?: unknown[]) => before.query(sql, parameters) as Promise<{ id: string }[]>;
    const [org] = await q(`INSERT INTO organizations (name, storage_allocation) VALUES ('Seed', 0) RETURNING id`);
    const [user] = await q(`INSERT INTO users (email, name, password_hash) VALUES ('seed@seed.example', 'Seed', 'hash') RETURNING id`);
    const [pending] = await q(
      `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at) VALUES ($1, 'new@seed.example', 'viewer', $2, now() + interval '1 day') RETURNING id`,
      [org.id, randomBytes(32).toString('hex')],
    );
    await q(
      `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at, accepted_at, accepted_by)
       VALUES ($1, 'seed@seed.example', 'editor', $2, now() + interval '1 day', now(), $3)`,
      [org.id, randomBytes(32).toString('hex'), user.id],
    );
    await before.destroy();

    const after = await migratedDatabase(
      url,
      migrationClasses((timestamp) => timestamp <= THIS_MIGRATION),
    );
    try {
      expect(await after.query(`SELECT email, mail_id FROM invitations ORDER BY email`)).toEqual([
        { email: 'new@seed.example', mail_id: null },
        { email: 'seed@seed.example', mail_id: null },
      ]);
      const mailId = '00000000-0000-4000-8000-000000000001';
      await after.query(`UPDATE invitations SET mail_id = $2 WHERE id = $1`, [pending.id, mailId]);

      const hash = 'a'.repeat(64);
      const insert = (tokenHash: string, purpose: string, expires = `now() + interval '1 hour'`) =>
        after.query(
          `INSERT INTO email_tokens (token_hash, purpose, user_id, email, created_at, expires_at) VALUES ($1, $2, $3, 'seed@seed.example', now(), ${expires})`,
          [tokenHash, purpose, user.id],
        );
      await insert(hash, 'password-reset');
      await insert('b'.repeat(64), 'verify-email');
      await expect(insert(hash, 'verify-email')).rejects.toThrow(/email_tokens_pkey/);
      await expect(insert('not-a-hash', 'password-reset')).rejects.toThrow(/email_tokens_hash_form/);
      await expect(insert('c'.repeat(64), 'login')).rejects.toThrow(/email_tokens_purpose/);
      await expect(insert('d'.repeat(64), 'password-reset', 'now()')).rejects.toThrow(/email_tokens_expire_after_creation/);

      // And back: the table and the column go, the invitations stay.
      await after.undoLastMigration({ transaction: 'each' });
      expect(await after.query(`SELECT to_regclass('email_tokens') IS NULL AS gone`)).toEqual([{ gone: true }]);
      expect(
        await after.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'invitations' AND column_name = 'mail_id'`),
      ).toEqual([{ n: 0 }]);
      expect(await after.query('SELECT count(*)::int AS n FROM invitations')).toEqual([{ n: 2 }]);
    } finally {
      await after.destroy();
    }
  });
});
