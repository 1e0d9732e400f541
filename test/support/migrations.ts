import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource, MigrationInterface } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';

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
