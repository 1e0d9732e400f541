import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runMigrations } from '../../src/database/data-source-options';
import { withClient } from '../../src/database/database-roles';
import { normalEmail } from '../../src/people/email-address';
import { databaseUrlFor } from '../support/database-url';
import { migratedDatabase, migrationClasses } from '../support/migrations';
import { TEST_OWNER_ROLE } from '../support/test-database';

/** The migration under test: everything before it is applied, rows are seeded as the service stored them then, then it runs. */
const MIGRATION = 'EmailNormalForm1796200000000';
const TIMESTAMP = 1796200000000;

/** A new empty database (not the template: that one is migrated already), migrated up to the one before MIGRATION. */
async function databaseBeforeTheMigration(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}" OWNER "${TEST_OWNER_ROLE}"`));
  const url = databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name);
  await (
    await migratedDatabase(
      url,
      migrationClasses((timestamp) => timestamp < TIMESTAMP),
    )
  ).destroy();
  return { url, drop: () => withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined) };
}

describe(`migration ${MIGRATION}: one spelling per email`, () => {
  let database: { url: string; drop(): Promise<void> };
  let db: Client;
  beforeEach(async () => {
    database = await databaseBeforeTheMigration();
    db = new Client({ connectionString: database.url });
    await db.connect();
  });
  afterEach(async () => {
    await db.end();
    await database.drop();
  });

  const insertUser = async (email: string, deleted = false) =>
    (
      await db.query(`INSERT INTO users (email, name, deleted_at) VALUES ($1, 'Someone', ${deleted ? 'clock_timestamp()' : 'NULL'}) RETURNING id`, [
        email,
      ])
    ).rows[0].id as string;
  const emailsOf = async (table: 'users' | 'invitations') =>
    Object.fromEntries((await db.query(`SELECT id, email FROM ${table}`)).rows.map((row: { id: string; email: string }) => [row.id, row.email]));
  const emailIndex = async () => (await db.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'users_email_key'`)).rows[0].indexdef as string;
  const applied = async () => (await db.query(`SELECT name FROM migrations WHERE name = $1`, [MIGRATION])).rows.length === 1;

  it('rewrites users and invitations into the normal form, and compares emails exactly from then on', async () => {
    const seeded = {
      alice: ['  Alice@A.Example', await insertUser('  Alice@A.Example')],
      accented: ['ÀLICE@a.example', await insertUser('ÀLICE@a.example')],
      idn: ['bob@Bücher.example', await insertUser('bob@Bücher.example')],
      decomposed: ['re\u0301mi@a.example', await insertUser('re\u0301mi@a.example')],
      // A deleted user keeps their row; theirs may become a live user's spelling without colliding.
      deleted: ['ALICE@a.example', await insertUser('ALICE@a.example', true)],
      plain: ['carol@c.example', await insertUser('carol@c.example')],
    };
    const organizationId = (await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Acme', 0) RETURNING id`)).rows[0].id;
    const invite = async (email: string) =>
      (
        await db.query(
          `INSERT INTO invitations (organization_id, email, role, token_hash, expires_at)
           VALUES ($1, $2, 'viewer', $3, clock_timestamp() + interval '7 days') RETURNING id`,
          [organizationId, email, randomBytes(32).toString('hex')],
        )
      ).rows[0].id as string;
    const sam = await invite('Sam@Studio.Example');
    const unconvertible = await invite('x@\u0378.example');

    expect(await runMigrations(database.url)).toContain(MIGRATION);

    const users = await emailsOf('users');
    for (const [raw, id] of Object.values(seeded)) expect(users[id]).toBe(normalEmail(raw));
    expect(users[seeded.alice[1]]).toBe('alice@a.example');
    expect(users[seeded.accented[1]]).toBe('Àlice@a.example');
    expect(users[seeded.idn[1]]).toBe('bob@xn--bcher-kva.example');
    expect(users[seeded.decomposed[1]]).toBe('r\u00e9mi@a.example');
    expect(users[seeded.deleted[1]]).toBe('alice@a.example');
    const invitations = await emailsOf('invitations');
    expect(invitations[sam]).toBe('sam@studio.example');
    expect(invitations[unconvertible]).toBe('x@\u0378.example');
    expect((await db.query(`SELECT withdrawn_at FROM invitations WHERE id = $1`, [unconvertible])).rows[0].withdrawn_at).toBeInstanceOf(Date);
    expect((await db.query(`SELECT withdrawn_at FROM invitations WHERE id = $1`, [sam])).rows[0].withdrawn_at).toBeNull();

    // A plain unique index: another spelling (any case) is another email, the same one is refused.
    expect(await emailIndex()).toMatch(/ON public\.users USING btree \(email\) WHERE \(deleted_at IS NULL\)$/);
    await insertUser('ALICE@a.example');
    await expect(insertUser('alice@a.example')).rejects.toThrow(/users_email_key/);
  });

  it('stops, naming the users whose emails would collide, and changes nothing', async () => {
    const composed = await insertUser('r\u00e9mi@a.example');
    const decomposed = await insertUser('re\u0301mi@a.example');
    const ascii = await insertUser('sam@xn--bcher-kva.example');
    const unicode = await insertUser('Sam@Bücher.example');
    const untouched = await insertUser('Dana@D.example');
    const before = await emailsOf('users');
    const indexBefore = await emailIndex();

    const failure = runMigrations(database.url);
    await expect(failure).rejects.toThrow(
      new RegExp(
        `users ${composed} \\(r\u00e9mi@a\\.example\\) and ${decomposed} \\(re\u0301mi@a\\.example\\) would all have the email r\u00e9mi@a\\.example`,
      ),
    );
    await expect(failure).rejects.toThrow(
      new RegExp(
        `users ${ascii} \\(sam@xn--bcher-kva\\.example\\) and ${unicode} \\(Sam@Bücher\\.example\\) would all have the email sam@xn--bcher-kva\\.example`,
      ),
    );
    await expect(failure).rejects.toThrow(/Nothing was changed/);
    expect(await emailsOf('users')).toEqual(before);
    expect(before[untouched]).toBe('Dana@D.example');
    expect(await emailIndex()).toBe(indexBefore);
    expect(await applied()).toBe(false);

    // Once the operator resolves them, it runs.
    await db.query(`UPDATE users SET deleted_at = clock_timestamp() WHERE id = ANY($1::uuid[])`, [[decomposed, unicode]]);
    expect(await runMigrations(database.url)).toContain(MIGRATION);
    expect((await emailsOf('users'))[untouched]).toBe('dana@d.example');
  });
});
