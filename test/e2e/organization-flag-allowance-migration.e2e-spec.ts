import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796500000000;

/**
 * OrganizationFlagAllowance (decisions.md, "A studio's own deployment") on a database that already holds organizations:
 * each keeps its level's allowance (NULL) and its other columns, and an allowance outside 1-10,000 cannot be stored.
 */
describe('the organization flag allowance migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it("leaves existing organizations at their level's allowance, and holds new ones to 1-10,000", async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [before] = (
        await db.query(
          `INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 4096) RETURNING id, name, storage_allocation, created_at`,
        )
      ).rows;
      await db.query(`INSERT INTO subscriptions (organization_id, plan, status) VALUES ($1, 'pro', 'active')`, [before.id]);

      await scratch.migrateAll();

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
