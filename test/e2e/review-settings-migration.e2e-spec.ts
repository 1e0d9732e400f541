import { randomBytes } from 'node:crypto';
import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796800000000;

/**
 * ReviewSettings (decisions.md, "Change requests (turn 5)") on a database that already holds an organization: it has
 * no setting row (review off), its rows are untouched; the history refuses UPDATE, DELETE and TRUNCATE even to the
 * owner, and goes with its organization.
 */
describe('the review settings migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('leaves existing organizations without a setting, keeps the history append-only, and removes both with the organization', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [{ id: organizationId }] = (await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 1024) RETURNING id`))
        .rows;
      const [{ id: userId }] = (await db.query(`INSERT INTO users (email, name) VALUES ('maya@acme.example', 'Maya') RETURNING id`)).rows;
      await db.query(`INSERT INTO flags (organization_id, key, name, type, value) VALUES ($1, 'xp', 'XP', 'number', '2')`, [organizationId]);

      await scratch.migrateAll();

      expect((await db.query('SELECT count(*)::int AS n FROM organization_review_settings')).rows[0].n).toBe(0);
      expect((await db.query('SELECT name FROM organizations WHERE id = $1', [organizationId])).rows).toEqual([{ name: 'Acme' }]);
      await expect(
        db.query(
          `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at, updated_by) VALUES ($1, true, 6, false, now(), $2)`,
          [organizationId, userId],
        ),
      ).rejects.toThrow(/check constraint/);
      await db.query(
        `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at, updated_by) VALUES ($1, true, 2, false, now(), $2)`,
        [organizationId, userId],
      );
      const before = { required: false, approvals: 1, selfApproval: false };
      const after = { required: true, approvals: 2, selfApproval: false };
      await db.query(`INSERT INTO organization_review_history (organization_id, user_id, before, after, created_at) VALUES ($1, $2, $3, $4, now())`, [
        organizationId,
        userId,
        before,
        after,
      ]);

      // Even the owner cannot rewrite or empty it.
      await expect(db.query(`UPDATE organization_review_history SET after = before`)).rejects.toThrow(/append-only \(UPDATE refused\)/);
      await expect(db.query(`DELETE FROM organization_review_history`)).rejects.toThrow(/append-only \(DELETE refused\)/);
      await expect(db.query(`TRUNCATE organization_review_history`)).rejects.toThrow(/append-only \(TRUNCATE refused\)/);
      expect((await db.query('SELECT before, after FROM organization_review_history')).rows).toEqual([{ before, after }]);

      const key = (permissions: string[]) =>
        db.query(`INSERT INTO api_keys (organization_id, name, key_hash, permissions) VALUES ($1, 'k', $2, $3)`, [
          organizationId,
          randomBytes(32).toString('hex'),
          permissions,
        ]);
      await key(['FLAGS_WRITE', 'FLAGS_WRITE_UNREVIEWED']);
      await expect(key(['FLAGS_READ', 'FLAGS_WRITE_UNREVIEWED'])).rejects.toThrow(/check constraint/);
      await expect(key(['FLAGS_ADMIN'])).rejects.toThrow(/check constraint/);

      await db.query('DELETE FROM organizations WHERE id = $1', [organizationId]);
      expect((await db.query('SELECT count(*)::int AS n FROM organization_review_history')).rows[0].n).toBe(0);
      expect((await db.query('SELECT count(*)::int AS n FROM organization_review_settings')).rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  });
});
