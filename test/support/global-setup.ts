import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from '../../src/database/data-source-options';
import { derivedPassword, ensureLoginRoles, RoleCredentials, urlAs, withClient } from '../../src/database/database-roles';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';
import { databaseUrlFor } from './database-url';
import { TEST_OWNER_ROLE, TEST_SERVICE_ROLE } from './test-database';

/**
 * One PostgreSQL for the whole run (the embedded one, or DATABASE_URL's server), migrated once by the owner role
 * into a template database that every test file clones, so no test sees another file's data. Test apps connect as
 * the service role, so the whole suite runs with the privileges production has.
 *
 * The two roles are cluster-wide and shared by runs on the same server; their passwords are derived from the admin
 * URL (whoever knows it is a superuser there anyway), so concurrent runs set the same ones.
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-test-pg-'));
    // The test's own folder (mkdtemp makes it 0700): as root, the cluster runs as `postgres`, which must enter it.
    chmodSync(dataDir, 0o711);
    const embedded = new EmbeddedPostgres(dataDir);
    adminUrl = (await embedded.start()).superuserUrl;
    (globalThis as { __EMBEDDED_PG__?: EmbeddedPostgres }).__EMBEDDED_PG__ = embedded;
  }
  const role = (name: string): RoleCredentials => ({ name, password: derivedPassword(adminUrl, name) });
  const [owner, service] = [role(TEST_OWNER_ROLE), role(TEST_SERVICE_ROLE)];
  await ensureLoginRoles(adminUrl, [owner, service]);

  const template = `flagstore_template_${process.pid}_${Date.now()}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${template}" OWNER "${owner.name}"`));
  await runMigrations(urlAs(adminUrl, owner, template), { grantTo: service.name });

  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_OWNER_URL = databaseUrlFor(urlAs(adminUrl, owner), 'postgres');
  process.env.TEST_PG_SERVICE_URL = databaseUrlFor(urlAs(adminUrl, service), 'postgres');
  process.env.TEST_PG_TEMPLATE = template;
}
