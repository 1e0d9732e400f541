import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { runMigrations } from './data-source-options';
import { inspectServiceRole, serviceRoleWarnings, withClient } from './database-roles';
import { EmbeddedPostgres } from './embedded-postgres';

export interface OpenDatabase {
  /** What the service connects as: the service role, never the owner when it can help it. */
  url: string;
  /** Migrations this call applied (empty when the schema was current). */
  applied: string[];
  /** Stops an embedded database within `timeoutMs` (embedded-postgres.ts); nothing to do for DATABASE_URL. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The configured PostgreSQL (DATABASE_URL) or an embedded one under DATA_DIR, migrated to the latest schema by
 * the owner of the schema (the embedded cluster's owner role, or DATABASE_MIGRATION_URL), which then grants the
 * service's role what it needs. Warns when the service's role could change the audit log: a superuser, the owner.
 */
export async function openDatabase(config: AppConfig): Promise<OpenDatabase> {
  const logger = new Logger('Database');
  let embedded: EmbeddedPostgres | undefined;
  let closed = false;
  const close = async (timeoutMs?: number) => {
    if (closed) return;
    closed = true;
    await embedded?.stop(timeoutMs);
  };
  try {
    let url: string;
    let migrationUrl: string;
    let serviceRole: string | undefined;
    if (config.databaseUrl) {
      url = config.databaseUrl;
      migrationUrl = config.databaseMigrationUrl ?? url;
      if (migrationUrl !== url) serviceRole = await currentRole(url);
    } else {
      embedded = new EmbeddedPostgres(config.dataDir);
      ({ serviceUrl: url, ownerUrl: migrationUrl, serviceRole } = await embedded.start());
      logger.log(`Embedded PostgreSQL running from ${embedded.clusterDir}`);
    }
    const applied = await runMigrations(migrationUrl, { grantTo: serviceRole });
    if (applied.length > 0) logger.log(`Applied migrations: ${applied.join(', ')}`);
    for (const warning of serviceRoleWarnings(await inspectServiceRole(url))) logger.warn(warning);
    return { url, applied, close };
  } catch (error) {
    // A server started by this call is not left running behind a failed boot.
    await close().catch(() => undefined);
    throw error;
  }
}

function currentRole(url: string): Promise<string> {
  return withClient(url, async (client) => (await client.query<{ role: string }>('SELECT current_user AS role')).rows[0].role);
}
