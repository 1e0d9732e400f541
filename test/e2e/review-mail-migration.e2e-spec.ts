import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1797000000000;

/**
 * ReviewMail (decisions.md, "Change requests (turn 5)", Listing and hearing) on a database that already holds users:
 * they keep every column as it was and get change request mail (review_mail true); the column takes no null.
 */
describe('the review mail migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('turns review mail on for every user from before, leaves the rest of their row, and refuses null', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      await db.query(`INSERT INTO users (email, name, password_hash) VALUES ('ada@studio.example', 'Ada', NULL), ('bo@studio.example', 'Bo', 'x')`);
      const before = (await db.query('SELECT * FROM users ORDER BY email')).rows;

      await scratch.migrateAll();

      const after = (await db.query('SELECT * FROM users ORDER BY email')).rows;
      expect(after).toEqual(before.map((row) => ({ ...row, review_mail: true })));
      await db.query(`INSERT INTO users (email, name) VALUES ('cy@studio.example', 'Cy')`);
      expect((await db.query(`SELECT review_mail FROM users WHERE email = 'cy@studio.example'`)).rows).toEqual([{ review_mail: true }]);
      await expect(db.query(`UPDATE users SET review_mail = NULL WHERE email = 'ada@studio.example'`)).rejects.toThrow(/null/);
    } finally {
      await db.end();
    }
  });
});
