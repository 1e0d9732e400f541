import { randomBytes } from 'node:crypto';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from '../support/database-url';
import { migratedDatabase, migrationClasses } from '../support/migrations';

const THIS_MIGRATION = 1796250000000;

describe('migration EmailProofAndIdentities, on a database with people from before it', () => {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const url = databaseUrlFor(adminUrl, name);

  beforeAll(() => withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`)));
  afterAll(() => withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));

  it('verifies every existing user but those who joined by accepting an invitation as a new account, and adds user_identities', async () => {
    const before = await migratedDatabase(
      url,
      migrationClasses((timestamp) => timestamp < THIS_MIGRATION),
    );
    const q = (sql: string, parameters?: unknown[]) => before.query(sql, parameters) as Promise<{ id: string }[]>;
    const [org] = await q(`INSERT INTO organizations (name, storage_allocation) VALUES ('Seed', 0) RETURNING id`);
    const user = async (email: string, passwordHash: string | null) =>
      (
        await q(`INSERT INTO users (email, name, password_hash, created_at) VALUES ($1, 'x', $2, '2026-11-01T10:00:00Z') RETURNING id`, [
          email,
          passwordHash,
        ])
      )[0].id;
    const accepted = async (email: string, userId: string, acceptedAt: string) =>
      q(
        `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at, accepted_at, accepted_by)
         VALUES ($1, $2, 'editor', $3, '2026-12-01T00:00:00Z', $4, $5)`,
        [org.id, email, randomBytes(32).toString('hex'), acceptedAt, userId],
      );

    const operatorMade = await user('operator-made@seed.example', 'hash');
    const ssoMade = await user('sso-made@seed.example', null);
    await accepted('sso-made@seed.example', ssoMade, '2026-11-01T10:00:00.040Z'); // made by single sign-on from an invitation
    const throughLink = await user('through-link@seed.example', 'hash');
    await accepted('through-link@seed.example', throughLink, '2026-11-01T10:00:00.030Z'); // acceptance made the user
    await accepted('through-link@seed.example', throughLink, '2026-11-05T10:00:00Z'); // and a later one with its session
    const joinedLater = await user('joined-later@seed.example', 'hash');
    await accepted('joined-later@seed.example', joinedLater, '2026-11-03T09:00:00Z'); // an existing user's acceptance
    const withdrawnOnly = await user('withdrawn-only@seed.example', 'hash');
    await q(
      `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at, withdrawn_at)
       VALUES ($1, 'withdrawn-only@seed.example', 'viewer', $2, '2026-12-01T00:00:00Z', '2026-11-01T10:00:00.010Z')`,
      [org.id, randomBytes(32).toString('hex')],
    );
    await before.destroy();

    const after = await migratedDatabase(
      url,
      migrationClasses((timestamp) => timestamp <= THIS_MIGRATION),
    );
    try {
      const rows = (await after.query(
        `SELECT id, email_verified_at AS "verifiedAt", email_verified_at = created_at AS "atCreation" FROM users ORDER BY email`,
      )) as { id: string; verifiedAt: Date | null; atCreation: boolean | null }[];
      const byId = Object.fromEntries(rows.map((row) => [row.id, row.verifiedAt === null ? 'unverified' : row.atCreation ? 'verified' : 'odd']));
      expect(byId).toEqual({
        [operatorMade]: 'verified',
        [ssoMade]: 'verified',
        [throughLink]: 'unverified',
        [joinedLater]: 'verified',
        [withdrawnOnly]: 'verified',
      });

      expect(await after.query('SELECT count(*)::int AS n FROM user_identities')).toEqual([{ n: 0 }]);
      await after.query(`INSERT INTO user_identities (issuer, subject, user_id) VALUES ('https://idp.example', 'sub-1', $1)`, [joinedLater]);
      // One identity per provider and subject, and one identity per user at a provider.
      await expect(
        after.query(`INSERT INTO user_identities (issuer, subject, user_id) VALUES ('https://idp.example', 'sub-1', $1)`, [operatorMade]),
      ).rejects.toThrow(/user_identities_pkey/);
      await expect(
        after.query(`INSERT INTO user_identities (issuer, subject, user_id) VALUES ('https://idp.example', 'sub-2', $1)`, [joinedLater]),
      ).rejects.toThrow(/user_identities_one_per_issuer/);
      await after.query(`INSERT INTO user_identities (issuer, subject, user_id) VALUES ('https://other.example', 'sub-1', $1)`, [joinedLater]);

      // And back: the column and the table go, the users stay.
      await after.undoLastMigration({ transaction: 'each' });
      expect(await after.query(`SELECT to_regclass('user_identities') IS NULL AS gone`)).toEqual([{ gone: true }]);
      expect(
        await after.query(
          `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'email_verified_at'`,
        ),
      ).toEqual([{ n: 0 }]);
      expect(await after.query('SELECT count(*)::int AS n FROM users')).toEqual([{ n: 5 }]);
    } finally {
      await after.destroy();
    }
  });
});
