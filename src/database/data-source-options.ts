import { join } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';

// Compiled: dist/database -> dist/migrations/*.js. From sources (jest, ts-node): src/database -> migrations/*.ts.
const MIGRATIONS = __filename.endsWith('.ts')
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

// A constant key for pg_advisory_lock so that instances booting together migrate one at a time.
const MIGRATION_LOCK_KEY = 7_311_020_418;

export function dataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    synchronize: false,
    migrationsRun: false,
    migrations: [MIGRATIONS],
    migrationsTableName: 'migrations',
    // A write while PostgreSQL is away fails (503) within 10 s instead of hanging: connecting gives up after 5 s,
    // and a statement (lock waits included) after 8 s on the server or 9 s at the client.
    extra: { max: 20, connectionTimeoutMillis: 5_000, statement_timeout: 8_000, query_timeout: 9_000 },
  };
}

/** Applies pending migrations, serialised across instances by an advisory lock. */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl), extra: { max: 1 } });
  await dataSource.initialize();
  try {
    await dataSource.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    await dataSource.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
