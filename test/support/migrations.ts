import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { withClient } from '../../src/database/database-roles';
import { databaseUrlFor } from './database-url';
import { TEST_OWNER_ROLE } from './test-database';

const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');

export type MigrationClass = new () => MigrationInterface;

/** The migration classes of `migrations/`, oldest first, those whose timestamp (the file name's prefix) passes `keep`. */
export function migrationClasses(keep: (timestamp: number) => boolean = () => true): MigrationClass[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{13}-\w+\.ts$/.test(file) && keep(Number(file.slice(0, 13))))
    .sort()
    .map(
      (file) =>
        Object.values(require(join(MIGRATIONS_DIR, file)) as Record<string, unknown>).find((value) => typeof value === 'function') as MigrationClass,
    );
}

/**
 * A data source on `url` (one connection) once `migrations` have run, each in a transaction of its own, as a test of
 * one migration needs them: the ones before it on an empty database, seeded, then it. The caller destroys it.
 */
export async function migratedDatabase(url: string, migrations: MigrationClass[]): Promise<DataSource> {
  const dataSource = new DataSource({ ...dataSourceOptions(url), migrations, extra: { max: 1 } });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

/**
 * The database a test of one migration works on: a scratch database owned by the test owner role, made before the
 * file's tests and dropped after them. The test migrates it through every migration before `migration`
 * (`migrateBefore`), seeds rows as they stood then, and migrates it through the rest (`migrateAll`).
 */
export function migrationUnderTest(migration: number) {
  const name = `flagstore_migration_${randomBytes(6).toString('hex')}`;
  const adminUrl = () => process.env.TEST_PG_ADMIN_URL!;
  const ownerUrl = () => databaseUrlFor(process.env.TEST_PG_OWNER_URL!, name);
  const migrate = async (migrations: MigrationClass[]) => (await migratedDatabase(ownerUrl(), migrations)).destroy();

  beforeAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`CREATE DATABASE "${name}" OWNER "${TEST_OWNER_ROLE}"`));
  });
  afterAll(async () => {
    await withClient(adminUrl(), (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });

  return {
    /** The scratch database's URL, as its owner. */
    ownerUrl,
    /** Every migration before the one under test. */
    migrateBefore: () => migrate(migrationClasses((timestamp) => timestamp < migration)),
    /** Every migration, the one under test included. */
    migrateAll: () => migrate(migrationClasses()),
    /** A client connected as the owner; the caller ends it. */
    connect: async () => {
      const client = new Client({ connectionString: ownerUrl() });
      await client.connect();
      return client;
    },
  };
}
