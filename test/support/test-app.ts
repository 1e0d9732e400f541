import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Client } from 'pg';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from '../../src/app/app.module';
import { LOG_DESTINATION } from '../../src/logging/logging.module';
import { configureApp } from '../../src/app/app.setup';
import { CLOCK, Clock } from '../../src/common/clock';
import { SCRYPT_COST, ScryptCost } from '../../src/auth/sessions/password-hasher';
import { freePort } from '../../src/common/free-port';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { recordExchanges } from './contract';
import { createTestDatabase } from './test-database';
import { ApiExpressAdapter } from '../../src/http/api-express-adapter';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijkl';

/** The scrypt cost test apps hash passwords with unless a test asks for OWASP's (the cost is not what they test). */
export const TEST_SCRYPT_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

export interface TestApp {
  app: NestExpressApplication;
  /** The listening server, for supertest. */
  http: ReturnType<NestExpressApplication['getHttpServer']>;
  config: AppConfig;
  /** A client on this test file's own database, as a superuser, to check (and arrange) what was stored. */
  db: Client;
  /** What the app connects as: the service role, which owns nothing and may only append to the audit log. */
  databaseUrl: string;
  /** The same database as a superuser (what `db` connects as). */
  adminDatabaseUrl: string;
  close(): Promise<void>;
}

/**
 * Boots the real application module on a fresh clone of the migrated template database, connected as the service
 * role (as production is), so every test runs with the privileges the service really has.
 * `env` overrides configuration exactly as environment variables would.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: {
    leanConfigPoll?: boolean;
    /** A second instance of the same deployment: shares that app's database, and drops nothing. */
    sameDatabaseAs?: TestApp;
    /** An already migrated database of the test's own (a server it stops and starts), used as it is (for `db` too). */
    databaseUrl?: string;
    /** Where the app's log lines go (JSON, one per line); by default stdout, at LOG_LEVEL warn unless `env` says. */
    logDestination?: NodeJS.WritableStream;
    /** The app's CLOCK (a FakeClock: time moves when the test moves it, and the app's clock timers never fire). */
    clock?: Clock;
    /**
     * OWASP's scrypt cost for passwords (128 MiB and a few hundred ms a hash). By default test apps hash with a cheap
     * cost instead (TEST_SCRYPT_COST), so that a file can sign in many times; hashes name their cost either way.
     */
    owaspPasswordHashing?: boolean;
    /** Providers replaced by the given values. */
    overrides?: Array<{ provide: unknown; useValue: unknown }>;
    /** Where the built console is served from (the real build by default: dist/public/console). */
    consoleDir?: string;
  } = {},
): Promise<TestApp> {
  const given = options.sameDatabaseAs
    ? { url: options.sameDatabaseAs.databaseUrl, adminUrl: options.sameDatabaseAs.adminDatabaseUrl }
    : options.databaseUrl
      ? { url: options.databaseUrl, adminUrl: options.databaseUrl }
      : undefined;
  const database = given ? undefined : await createTestDatabase();
  const databaseUrl = given?.url ?? database!.url;
  const adminDatabaseUrl = given?.adminUrl ?? database!.adminUrl;
  const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-test-data-'));
  // A real port known up front, so that PUBLIC_URL (and with it signed URLs and mediaUrl) points at this app; `env`
  // may name one itself (PORT, with a PUBLIC_URL that an OpenID provider must know before the app starts).
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  // REDIS_URL from the environment (CI's second run) puts every test app on the shared rate limiter and bus, each
  // deployment (apps on one database) under a REDIS_PREFIX of its own, as deployments sharing one Redis run: test files
  // running side by side never hear each other's changes.
  const redis = process.env.REDIS_URL
    ? { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: `test-${createHash('sha256').update(databaseUrl).digest('hex').slice(0, 16)}` }
    : {};
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: String(port), LOG_LEVEL: 'warn', ...redis, ...env });

  const testing = Test.createTestingModule({ imports: [AppModule.forRoot(config, databaseUrl)] });
  if (options.logDestination) testing.overrideProvider(LOG_DESTINATION).useValue(options.logDestination);
  if (options.clock) testing.overrideProvider(CLOCK).useValue(options.clock);
  if (!options.owaspPasswordHashing) testing.overrideProvider(SCRYPT_COST).useValue(TEST_SCRYPT_COST);
  for (const { provide, useValue } of options.overrides ?? []) testing.overrideProvider(provide).useValue(useValue);
  const moduleRef = await testing.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(new ApiExpressAdapter(), { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(PinoNestLogger));
  configureApp(app, config, options);
  await app.init();
  // Every answer this app gives is checked against its own /docs-json after each test (contract-check.ts).
  const exchanges = recordExchanges(app.getHttpServer());
  await app.listen(port, '127.0.0.1');
  const db = new Client({ connectionString: adminDatabaseUrl });
  db.on('error', () => undefined); // a test that stops its database server cuts this connection too
  await db.connect();

  return {
    app,
    http: app.getHttpServer(),
    config,
    db,
    databaseUrl,
    adminDatabaseUrl,
    close: async () => {
      await db.end();
      const mismatches = await exchanges.verify(true);
      await app.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      if (mismatches.length > 0) throw new Error(`Answers that do not match /docs-json:\n${mismatches.join('\n')}`);
    },
  };
}
