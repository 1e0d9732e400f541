import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from '../support/database-url';
import { MigrationClass, migratedDatabase, migrationClasses } from '../support/migrations';
import { TEST_OWNER_ROLE } from '../support/test-database';

const THIS_MIGRATION = 1796700000000;

async function migrate(url: string, migrations: MigrationClass[]): Promise<void> {
  await (await migratedDatabase(url, migrations)).destroy();
}

/**
 * StorageFileNames (decisions.md, "File names") on a database that already holds files, pending and complete, with
 * and without metadata: each keeps every column as it was and has no name; names written afterwards follow the rule.
 */
describe('the storage file names migration', () => {
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const adminUrl = () => process.env.TEST_PG_ADMIN_URL!;
  const ownerUrl = () => databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name);

  beforeAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`CREATE DATABASE "${name}" OWNER "${TEST_OWNER_ROLE}"`));
  });
  afterAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });

  it('leaves existing files unnamed and untouched, and holds new names to the rule', async () => {
    await migrate(
      ownerUrl(),
      migrationClasses((timestamp) => timestamp < THIS_MIGRATION),
    );
    const db = new Client({ connectionString: ownerUrl() });
    await db.connect();
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

      await migrate(ownerUrl(), migrationClasses());

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
