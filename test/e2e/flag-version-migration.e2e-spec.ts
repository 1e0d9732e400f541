import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796400000000;

/**
 * FlagVersionAndAuditContext (decisions.md, "A flag's version", "Audit entries say why") on a database that already
 * holds flags and audit entries: each flag starts at version 1, each entry has no context, and the rows are untouched.
 */
describe('the flag version and audit context migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('gives existing flags version 1 and existing entries no context, then counts writes from there', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [{ id: organizationId }] = (await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 0) RETURNING id`)).rows;
      const [{ id: flagId, updated_at: updatedAt }] = (
        await db.query(
          `INSERT INTO flags (organization_id, key, name, type, value) VALUES ($1, 'motd', 'Motd', 'string', '"Hi"') RETURNING id, updated_at`,
          [organizationId],
        )
      ).rows;
      await db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after)
         VALUES ($1, $2, 'motd', 'system', NULL, 'flag.create', NULL, '{"value":"Hi"}')`,
        [organizationId, flagId],
      );

      await scratch.migrateAll();

      const flag = (await db.query('SELECT key, value, version, updated_at FROM flags WHERE id = $1', [flagId])).rows[0];
      expect(flag).toEqual({ key: 'motd', value: 'Hi', version: 1, updated_at: updatedAt });
      const entries = (await db.query('SELECT action, after, context FROM flag_audit_entries WHERE flag_id = $1', [flagId])).rows;
      expect(entries).toEqual([{ action: 'flag.create', after: { value: 'Hi' }, context: null }]);
      // The log stays append-only, and a context must be an object.
      await expect(db.query(`UPDATE flag_audit_entries SET context = '{"import":true}'`)).rejects.toThrow(/append-only/);
      await expect(
        db.query(
          `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, action, after, context)
           VALUES ($1, $2, 'motd', 'system', 'flag.update', '{}', '[1]')`,
          [organizationId, flagId],
        ),
      ).rejects.toThrow(/flag_audit_entries_context_object/);
      await expect(db.query('UPDATE flags SET version = 0 WHERE id = $1', [flagId])).rejects.toThrow(/flags_version_positive/);
    } finally {
      await db.end();
    }
  });
});
