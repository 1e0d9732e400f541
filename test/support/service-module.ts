import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Client } from 'pg';
import { AppModule } from '../../src/app/app.module';
import { AppConfig, loadConfig } from '../../src/config/app-config';
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
export function createServiceContext(): Promise<ServiceTestContext> {
  return createServiceContextWith();
}

export interface ServiceContextOptions {
  /** Configuration, exactly as environment variables would give it (STORAGE_ENFORCE_ALLOCATION, say). */
  env?: Record<string, string>;
  /** Providers replaced by the given values (a fake CLOCK, say). */
  overrides?: Array<{ provide: unknown; useValue: unknown }>;
}

export interface ConfiguredServiceTestContext extends ServiceTestContext {
  /** The configuration the services were given. */
  config: AppConfig;
}

/**
 * createServiceContext for the rules that depend on configuration or on a provider a test must control (the
 * clock): `env` read as the environment and `overrides` in place of the app's own providers.
 */
export async function createServiceContextWith(options: ServiceContextOptions = {}): Promise<ConfiguredServiceTestContext> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-service-test-'));
  const redis = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {};
  const config = loadConfig({ DATA_DIR: dataDir, ...redis, ...options.env });
  const testing = Test.createTestingModule({ imports: [AppModule.forRoot(config, database.url)] }).setLogger({
    log() {},
    error: console.error,
    warn: console.warn,
  });
  for (const { provide, useValue } of options.overrides ?? []) testing.overrideProvider(provide).useValue(useValue);
  const moduleRef = await testing.compile();
  const context: INestApplicationContext = await moduleRef.init();
  const db = new Client({ connectionString: database.url });
  await db.connect();
  return {
    get: (type) => context.get(type),
    db,
    config,
    close: async () => {
      await db.end();
      await context.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
