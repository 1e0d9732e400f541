import { randomUUID } from 'node:crypto';
import { migrationUnderTest } from '../support/migrations';

const THIS_MIGRATION = 1796900000000;

/**
 * ChangeRequests (decisions.md, "Change requests (turn 5)") on a database that already holds organizations and
 * flags: they stay as they were; the new tables hold the schema's rules (once per person per revision, lengths,
 * states) and go with their organization.
 */
describe('the change requests migration', () => {
  const scratch = migrationUnderTest(THIS_MIGRATION);

  it('leaves existing flags untouched and holds requests, changes, reviews and the timeline to the rules', async () => {
    await scratch.migrateBefore();
    const db = await scratch.connect();
    try {
      const [{ id: organizationId }] = (await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 1000) RETURNING id`))
        .rows;
      await db.query(`INSERT INTO flags (organization_id, key, name, type, value) VALUES ($1, 'motd', 'Motd', 'string', '"Hi"')`, [organizationId]);
      const flagsBefore = (await db.query('SELECT * FROM flags ORDER BY id')).rows;

      await scratch.migrateAll();

      expect((await db.query('SELECT * FROM flags ORDER BY id')).rows).toEqual(flagsBefore);
      const authorId = randomUUID();
      const [request] = (
        await db.query(
          `INSERT INTO change_requests (organization_id, title, author_type, author_id, author_name) VALUES ($1, 'Turn it on', 'session', $2, 'Ada')
           RETURNING id, state, revision`,
          [organizationId, authorId],
        )
      ).rows;
      expect(request).toMatchObject({ state: 'open', revision: 1 });
      await db.query(
        `INSERT INTO change_request_changes (change_request_id, position, flag_key, flag_id, before, after, flag_version) VALUES ($1, 0, 'motd', $2, '{}', NULL, 1)`,
        [request.id, flagsBefore[0].id],
      );
      const review = `INSERT INTO change_request_reviews (change_request_id, revision, user_id, user_name, decision) VALUES ($1, 1, $2, 'Bo', 'approve')`;
      const reviewer = randomUUID();
      await db.query(review, [request.id, reviewer]);
      await expect(db.query(review, [request.id, reviewer])).rejects.toThrow(/change_request_reviews_once/);
      await db.query(`INSERT INTO change_request_events (change_request_id, kind, actor_type, actor_id) VALUES ($1, 'opened', 'session', $2)`, [
        request.id,
        authorId,
      ]);
      await expect(
        db.query(`INSERT INTO change_request_events (change_request_id, kind, actor_type) VALUES ($1, 'opened', 'session')`, [request.id]),
      ).rejects.toThrow(/check/);
      await expect(
        db.query(`INSERT INTO change_requests (organization_id, title, author_type, author_id, author_name) VALUES ($1, '', 'session', $2, 'Ada')`, [
          organizationId,
          authorId,
        ]),
      ).rejects.toThrow(/check/);
      await expect(db.query(`UPDATE change_requests SET state = 'applied' WHERE id = $1`, [request.id])).rejects.toThrow(/check/);
      await expect(db.query(`UPDATE change_requests SET state = 'merged' WHERE id = $1`, [request.id])).rejects.toThrow(/check/);

      await db.query('DELETE FROM organizations WHERE id = $1', [organizationId]);
      for (const table of ['change_requests', 'change_request_changes', 'change_request_reviews', 'change_request_events']) {
        expect((await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
      }
    } finally {
      await db.end();
    }
  });
});
