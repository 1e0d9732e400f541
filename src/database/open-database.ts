import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { runMigrations } from './data-source-options';
import { EmbeddedPostgres } from './embedded-postgres';

export interface OpenDatabase {
  url: string;
  /** Migrations this call applied (empty when the schema was current). */
  applied: string[];
  close(): Promise<void>;
}

/** The configured PostgreSQL (DATABASE_URL) or an embedded one under DATA_DIR, migrated to the latest schema. */
export async function openDatabase(config: AppConfig): Promise<OpenDatabase> {
  const logger = new Logger('Database');
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = new EmbeddedPostgres(config.dataDir);
    url = await embedded.start();
    logger.log(`Embedded PostgreSQL running from ${embedded.clusterDir}`);
  }
  const applied = await runMigrations(url);
  if (applied.length > 0) logger.log(`Applied migrations: ${applied.join(', ')}`);
  let closed = false;
  return {
    url,
    applied,
    close: async () => {
      if (closed) return;
      closed = true;
      await embedded?.stop();
    },
  };
}
