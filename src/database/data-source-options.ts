import { join } from 'node:path';
import { DataSource, DataSourceOptions, Migration, QueryFailedError } from 'typeorm';
import { withAdvisoryLock } from './advisory-lock';
import { MIGRATION_LOCK_KEY } from './advisory-lock-keys';
import { grantServiceRole } from './database-roles';
import { DatabaseSetupError } from './database-setup-error';

// Compiled: dist/database -> dist/migrations/*.js. From sources (jest, ts-node): src/database -> migrations/*.ts.
const MIGRATIONS = __filename.endsWith('.ts') ? join(__dirname, '..', '..', 'migrations', '*.ts') : join(__dirname, '..', 'migrations', '*.js');

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

export interface MigrateOptions {
  /**
   * The role the service connects as, when it is not the one migrating: after the migrations it is granted what
   * its queries need, and no more (database-roles.ts).
   */
  grantTo?: string;
}

/**
 * Applies pending migrations as the role of `databaseUrl` (the owner of the schema), serialised across instances
 * by an advisory lock, then grants the service role its privileges under the same lock.
 */
export async function runMigrations(databaseUrl: string, options: MigrateOptions = {}): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl), extra: { max: 1 } });
  await dataSource.initialize();
  try {
    const [{ role }] = (await dataSource.query('SELECT current_user AS role')) as { role: string }[];
    // The pool holds one connection (max: 1), so the lock and the migrations share one session.
    const applied = await withAdvisoryLock(dataSource, MIGRATION_LOCK_KEY, async () => {
      let migrations: Migration[];
      try {
        migrations = await dataSource.runMigrations({ transaction: 'each' });
      } catch (error) {
        throw explainMigrationFailure(error, role);
      }
      if (options.grantTo !== undefined && options.grantTo !== role) await grantServiceRole(dataSource, options.grantTo);
      return migrations;
    });
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * SQLSTATEs of a role that may not change the schema: insufficient_privilege (not the owner, no CREATE), and
 * invalid_schema_name ("no schema has been selected to create in": a role without USAGE on the schema sees none).
 */
const NOT_THE_OWNER = new Set(['42501', '3F000']);

/** A role that may not change the schema (the service's own, say) cannot migrate: say which role to use instead. */
function explainMigrationFailure(error: unknown, role: string): unknown {
  const cause = error instanceof QueryFailedError ? (error.driverError as { code?: string; message?: string }) : undefined;
  if (!cause?.code || !NOT_THE_OWNER.has(cause.code)) return error;
  return new DatabaseSetupError(
    `Migrating the database as role "${role}" failed: ${cause.message}. Migrations run as the role that owns the ` +
      "schema: set DATABASE_MIGRATION_URL to that role (DATABASE_URL stays the service's own role); see docs/database-roles.md.",
  );
}
