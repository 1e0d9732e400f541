import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Client } from 'pg';
import { AppModule } from '../../src/app/app.module';
import { loadConfig } from '../../src/config/app-config';
import { createTestDatabase } from './test-database';

export interface ServiceTestContext {
  get<T>(type: Type<T>): T;
  /** A client on this file's own database, to check what was stored. */
  db: Client;
  close(): Promise<void>;
}

/**
 * The application's services on a fresh clone of the migrated database, with no HTTP server: rules are called
 * directly, as a scheduler or the CLI would call them.
 */
export async function createServiceContext(): Promise<ServiceTestContext> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-service-test-'));
  const redis = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {};
  const config = loadConfig({ DATA_DIR: dataDir, ...redis });
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config, database.url)] })
    .setLogger({ log() {}, error: console.error, warn: console.warn })
    .compile();
  const context: INestApplicationContext = await moduleRef.init();
  const db = new Client({ connectionString: database.url });
  await db.connect();
  return {
    get: (type) => context.get(type),
    db,
    close: async () => {
      await db.end();
      await context.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
