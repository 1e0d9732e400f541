import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { runMigrations } from '../../src/database/data-source-options';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';
import { databaseUrlFor } from './database-url';

/**
 * One PostgreSQL for the whole run (the embedded one, or DATABASE_URL's server), migrated once into a
 * template database that every test file clones, so no test sees another file's data.
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-test-pg-'));
    const embedded = new EmbeddedPostgres(dataDir);
    adminUrl = await embedded.start();
    (globalThis as { __EMBEDDED_PG__?: EmbeddedPostgres }).__EMBEDDED_PG__ = embedded;
  }
  const template = `flagstore_template_${process.pid}_${Date.now()}`;
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${template}"`);
  } finally {
    await client.end();
  }
  await runMigrations(databaseUrlFor(adminUrl, template));

  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
}
