import { randomUUID } from 'node:crypto';
import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796700000000;

/**
 * StorageFileNames (decisions.md, "File names") on a database that already holds files, pending and complete, with
 * and without metadata: each keeps every column as it was and has no name; names written afterwards follow the rule.
 */
describe('the storage file names migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('leaves existing files unnamed and untouched, and holds new names to the rule', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [{ id: organizationId }] = (await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 1000) RETURNING id`))
        .rows;
      const complete = randomUUID();
      const pending = randomUUID();
      await db.query(
        `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, object_key, state, checksum, completed_at)
         VALUES ($1, $2, 'image', 20, 'image/png', '{"level":3,"fileName":"kept in metadata"}', $3, 'complete', $4, now())`,
        [complete, organizationId, `${organizationId}/${complete}`, 'a'.repeat(64)],
      );
      await db.query(
        `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, object_key, state, upload_expires_at)
         VALUES ($1, $2, 'document', 5, 'application/pdf', NULL, $3, 'pending', now() + interval '15 minutes')`,
        [pending, organizationId, `${organizationId}/${pending}`],
      );
      const before = (await db.query('SELECT * FROM storage_items ORDER BY id')).rows;

      await scratch.migrateAll();

      const after = (await db.query('SELECT * FROM storage_items ORDER BY id')).rows;
      expect(after).toEqual(before.map((row) => ({ ...row, file_name: null })));
      expect(after.find((row) => row.id === complete).metadata).toEqual({ level: 3, fileName: 'kept in metadata' });

      await db.query('UPDATE storage_items SET file_name = $1 WHERE id = $2', ['Übersicht 🎮.png', complete]);
      expect((await db.query('SELECT file_name FROM storage_items WHERE id = $1', [complete])).rows[0].file_name).toBe('Übersicht 🎮.png');
      for (const bad of ['', 'a/b', 'a\\b', 'a\nb', 'a\u007fb', 'x'.repeat(256)]) {
        await expect(db.query('UPDATE storage_items SET file_name = $1 WHERE id = $2', [bad, pending])).rejects.toThrow(
          /storage_items_file_name_valid/,
        );
      }
    } finally {
      await db.end();
    }
  });
});
