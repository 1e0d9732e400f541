import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from '../support/database-url';
import { MigrationClass, migratedDatabase, migrationClasses } from '../support/migrations';
import { TEST_OWNER_ROLE } from '../support/test-database';

const THIS_MIGRATION = 1796500000000;

async function migrate(url: string, migrations: MigrationClass[]): Promise<void> {
  await (await migratedDatabase(url, migrations)).destroy();
}

/**
 * OrganizationFlagAllowance (decisions.md, "A studio's own deployment") on a database that already holds organizations:
 * each keeps its level's allowance (NULL) and its other columns, and an allowance outside 1-10,000 cannot be stored.
 */
describe('the organization flag allowance migration', () => {
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const adminUrl = () => process.env.TEST_PG_ADMIN_URL!;
  const ownerUrl = () => databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name);

  beforeAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`CREATE DATABASE "${name}" OWNER "${TEST_OWNER_ROLE}"`));
  });
  afterAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });

  it("leaves existing organizations at their level's allowance, and holds new ones to 1-10,000", async () => {
    await migrate(
      ownerUrl(),
      migrationClasses((timestamp) => timestamp < THIS_MIGRATION),
    );
    const db = new Client({ connectionString: ownerUrl() });
    await db.connect();
    try {
      const [before] = (
        await db.query(
          `INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 4096) RETURNING id, name, storage_allocation, created_at`,
        )
      ).rows;
      await db.query(`INSERT INTO subscriptions (organization_id, plan, status) VALUES ($1, 'pro', 'active')`, [before.id]);

      await migrate(ownerUrl(), migrationClasses());

      const [after] = (
        await db.query('SELECT id, name, storage_allocation, created_at, flag_allowance FROM organizations WHERE id = $1', [before.id])
      ).rows;
      expect(after).toEqual({ ...before, flag_allowance: null });
      await db.query('UPDATE organizations SET flag_allowance = 10000 WHERE id = $1', [before.id]);
      await db.query('UPDATE organizations SET flag_allowance = 1 WHERE id = $1', [before.id]);
      for (const outside of [0, 10_001, -5]) {
        await expect(db.query('UPDATE organizations SET flag_allowance = $2 WHERE id = $1', [before.id, outside])).rejects.toThrow(
          /organizations_flag_allowance_range/,
        );
      }
    } finally {
      await db.end();
    }
  });
});
