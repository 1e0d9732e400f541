import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796600000000;

/**
 * OrganizationCreators (decisions.md, "Organizations made by their people") on a database that already holds
 * organizations, users and memberships: every existing organization has no creator (it counts against nobody's
 * ORGANIZATIONS_PER_USER), the rows are untouched, and a creator must be a user.
 */
describe('the organization creators migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('gives existing organizations no creator, keeps their rows, and takes only users as creators', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [{ id: organizationId, created_at: createdAt }] = (
        await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 1024) RETURNING id, created_at`)
      ).rows;
      const [{ id: userId }] = (await db.query(`INSERT INTO users (email, name) VALUES ('maya@acme.example', 'Maya') RETURNING id`)).rows;
      await db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`, [organizationId, userId]);

      await scratch.migrateAll();

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
