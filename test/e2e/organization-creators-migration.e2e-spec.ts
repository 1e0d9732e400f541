import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from '../support/database-url';
import { MigrationClass, migratedDatabase, migrationClasses } from '../support/migrations';
import { TEST_OWNER_ROLE } from '../support/test-database';

const THIS_MIGRATION = 1796600000000;

async function migrate(url: string, migrations: MigrationClass[]): Promise<void> {
  await (await migratedDatabase(url, migrations)).destroy();
}

/**
 * OrganizationCreators (decisions.md, "Organizations made by their people") on a database that already holds
 * organizations, users and memberships: every existing organization has no creator (it counts against nobody's
 * ORGANIZATIONS_PER_USER), the rows are untouched, and a creator must be a user.
 */
describe('the organization creators migration', () => {
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const adminUrl = () => process.env.TEST_PG_ADMIN_URL!;
  const ownerUrl = () => databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name);

  beforeAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`CREATE DATABASE "${name}" OWNER "${TEST_OWNER_ROLE}"`));
  });
  afterAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });

  it('gives existing organizations no creator, keeps their rows, and takes only users as creators', async () => {
    await migrate(
      ownerUrl(),
      migrationClasses((timestamp) => timestamp < THIS_MIGRATION),
    );
    const db = new Client({ connectionString: ownerUrl() });
    await db.connect();
    try {
      const [{ id: organizationId, created_at: createdAt }] = (
        await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 1024) RETURNING id, created_at`)
      ).rows;
      const [{ id: userId }] = (await db.query(`INSERT INTO users (email, name) VALUES ('maya@acme.example', 'Maya') RETURNING id`)).rows;
      await db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`, [organizationId, userId]);

      await migrate(ownerUrl(), migrationClasses());

      const organization = (
        await db.query('SELECT name, storage_allocation, created_at, created_by FROM organizations WHERE id = $1', [organizationId])
      ).rows[0];
      expect(organization).toEqual({ name: 'Acme', storage_allocation: '1024', created_at: createdAt, created_by: null });
      expect((await db.query('SELECT role FROM memberships WHERE organization_id = $1', [organizationId])).rows).toEqual([{ role: 'admin' }]);
      await db.query(`INSERT INTO organizations (name, storage_allocation, created_by) VALUES ('Mine', 0, $1)`, [userId]);
      await expect(
        db.query(`INSERT INTO organizations (name, storage_allocation, created_by) VALUES ('Nobody', 0, '00000000-0000-4000-8000-000000000000')`),
      ).rejects.toThrow(/foreign key/);
      expect((await db.query('SELECT count(*)::int AS n FROM organizations WHERE created_by = $1', [userId])).rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
