import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { databaseUrlFor } from './database-url';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh clone of the migrated template database that the global setup made for this run. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL!;
  const name = `flagstore_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${process.env.TEST_PG_TEMPLATE}"`));
  return {
    url: databaseUrlFor(adminUrl, name),
    drop: async () => {
      await withAdminClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

async function withAdminClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
