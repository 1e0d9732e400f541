import { randomBytes } from 'node:crypto';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from './database-url';

/** The roles of every test database, as in production: one owns the schema and migrates, the apps connect as the other. */
export const TEST_OWNER_ROLE = 'flagstore_test_owner';
export const TEST_SERVICE_ROLE = 'flagstore_test_service';

export interface TestDatabase {
  name: string;
  /** As the service role: what apps connect as. */
  url: string;
  /** As the owner of the schema (which migrated it). */
  ownerUrl: string;
  /** As the superuser, to look at and arrange what is stored whatever the service may do. */
  adminUrl: string;
  drop(): Promise<void>;
}

/** A fresh clone of the migrated template database that the global setup made for this run. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `flagstore_test_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) =>
    client.query(`CREATE DATABASE "${name}" TEMPLATE "${process.env.TEST_PG_TEMPLATE}" OWNER "${TEST_OWNER_ROLE}"`),
  );
  return {
    name,
    url: databaseUrlFor(process.env.TEST_PG_SERVICE_URL!, name),
    ownerUrl: databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name),
    adminUrl: databaseUrlFor(adminUrl, name),
    drop: async () => {
      await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
