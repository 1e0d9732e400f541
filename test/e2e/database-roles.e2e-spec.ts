import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger, LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { freePort } from '../../src/common/free-port';
import { loadConfig } from '../../src/config/app-config';
import { withClient } from '../../src/database/database-roles';
import { DatabaseSetupError } from '../../src/database/database-setup-error';
import { openDatabase } from '../../src/database/open-database';
import { api, createFlag } from '../factories/flags.factory';
import { admin, createOrganization, subscribe } from '../factories/organizations.factory';
import { uploadFile } from '../factories/storage.factory';
import { logLines, startService, stopService, waitForHealth } from '../support/boot-service';
import { databaseUrlFor } from '../support/database-url';
import { createTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TEST_OWNER_ROLE, TEST_SERVICE_ROLE, TestDatabase } from '../support/test-database';

const APPEND_ONLY = /append-only \(TRUNCATE refused\)/;
const DENIED = /permission denied for table flag_audit_entries/;

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** An organization with one audit entry, written as the service would (the service role may INSERT). */
async function seedAuditEntry(db: Client): Promise<string> {
  const { rows } = await db.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Seed', 0) RETURNING id`);
  await db.query(
    `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, after)
     VALUES ($1, 'k', 'apiKey', 'key-1', 'flag.create', '{"value": true}')`,
    [rows[0].id],
  );
  return rows[0].id as string;
}

describe('the audit log is append-only at the database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it.each([
    ['the owner', () => database.ownerUrl],
    ['a superuser', () => database.adminUrl],
  ])('refuses TRUNCATE, even by %s', async (_who, url) => {
    const service = await connect(database.url);
    const db = await connect(url());
    try {
      await seedAuditEntry(service);
      await expect(db.query('TRUNCATE flag_audit_entries')).rejects.toThrow(APPEND_ONLY);
      // Nor through the organizations it belongs to.
      await expect(db.query('TRUNCATE organizations CASCADE')).rejects.toThrow(APPEND_ONLY);
      const { rows } = await db.query('SELECT count(*)::int AS n FROM flag_audit_entries');
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await Promise.all([service.end(), db.end()]);
    }
  });

  it('lets the service role read and append to it, and nothing else', async () => {
    const service = await connect(database.url);
    try {
      const organizationId = await seedAuditEntry(service);
      expect((await service.query('SELECT current_user AS role')).rows[0].role).toBe(TEST_SERVICE_ROLE);
      const { rows } = await service.query('SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1', [organizationId]);
      expect(rows[0].n).toBe(1);
      await expect(
        service.query(`UPDATE flag_audit_entries SET action = 'flag.update' WHERE organization_id = $1`, [organizationId]),
      ).rejects.toThrow(DENIED);
      await expect(service.query('UPDATE flag_audit_entries SET flag_id = NULL WHERE organization_id = $1', [organizationId])).rejects.toThrow(
        DENIED,
      );
      await expect(service.query('DELETE FROM flag_audit_entries WHERE organization_id = $1', [organizationId])).rejects.toThrow(DENIED);
      await expect(service.query('TRUNCATE flag_audit_entries')).rejects.toThrow(DENIED);
      await expect(service.query('SELECT * FROM flag_audit_entries FOR UPDATE')).rejects.toThrow(DENIED);
      // It owns nothing: it cannot switch the triggers off, drop the log, or make tables of its own.
      await expect(service.query('ALTER TABLE flag_audit_entries DISABLE TRIGGER USER')).rejects.toThrow(/must be owner/);
      await expect(service.query('DROP TABLE flag_audit_entries')).rejects.toThrow(/must be owner/);
      await expect(service.query('CREATE TABLE mine (id int)')).rejects.toThrow(/permission denied for schema/);
      // It reads which migrations ran, and cannot change that either.
      expect((await service.query('SELECT count(*)::int AS n FROM migrations')).rows[0].n).toBeGreaterThan(0);
      await expect(service.query('DELETE FROM migrations')).rejects.toThrow(/permission denied for table migrations/);
      const after = await service.query('SELECT count(*)::int AS n FROM flag_audit_entries WHERE organization_id = $1', [organizationId]);
      expect(after.rows[0].n).toBe(1);
    } finally {
      await service.end();
    }
  });
});

describe('the app as the service role', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('connects as the role that owns nothing', async () => {
    const [{ role }] = await t.app.get(DataSource).query('SELECT current_user AS role');
    expect(role).toBe(TEST_SERVICE_ROLE);
    const { rows } = await t.db.query(
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname IN ('flags', 'flag_audit_entries')`,
    );
    expect(rows).toEqual([{ owner: TEST_OWNER_ROLE }]);
  });

  it('serves end to end: keys, flags and their audit, deletion (whose history keeps its entries), storage', async () => {
    const org = await createOrganization(t);
    await subscribe(t, org.id);
    const flag = await createFlag(t, org.key, { key: 'double-xp' });
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Double XP' }).expect(200);
    await api(t, org.key).get('/flags/config').expect(200);
    // ON DELETE SET NULL clears the entries' flag_id as the table's owner: the service needs no UPDATE on the log.
    await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
    const audit = await api(t, org.key).get('/flags/audit').expect(200);
    expect(audit.body.results.map((entry: { action: string; flagId: string | null }) => [entry.action, entry.flagId])).toEqual([
      ['flag.delete', null],
      ['flag.update', null],
      ['flag.create', null],
    ]);
    const item = await uploadFile(t, org, Buffer.from('png!!'));
    await api(t, org.key).delete(`/storage/${item.id}`).expect(200);
    await admin(t).delete(`/organizations/${org.id}/api-keys/${org.keyId}`).expect(204);
    await api(t, org.key).get('/flags').expect(401);
  });
});

/** Nest's log lines while `run` runs. */
async function captureLog<T>(run: () => Promise<T>): Promise<{ result?: T; error?: unknown; lines: string[] }> {
  const lines: string[] = [];
  const capture: LoggerService = {
    log: (message) => lines.push(`log ${String(message)}`),
    warn: (message) => lines.push(`warn ${String(message)}`),
    error: (message) => lines.push(`error ${String(message)}`),
  };
  Logger.overrideLogger(capture);
  try {
    return { result: await run(), lines };
  } catch (error) {
    return { error, lines };
  } finally {
    Logger.overrideLogger(['error', 'warn']);
  }
}

describe('booting on DATABASE_URL', () => {
  let dataDir: string;
  const databases: TestDatabase[] = [];
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-roles-'));
  });
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** An empty database owned by the owner role, as an operator would create it. */
  async function emptyDatabase(): Promise<TestDatabase> {
    const database = await createTestDatabase();
    databases.push(database);
    await withClient(database.adminUrl, async (client) => {
      await client.query('DROP SCHEMA public CASCADE');
      await client.query(`CREATE SCHEMA public AUTHORIZATION "${TEST_OWNER_ROLE}"`);
    });
    return database;
  }

  const boot = (env: Record<string, string>) => captureLog(() => openDatabase(loadConfig({ DATA_DIR: dataDir, ...env })));

  it('warns, in one clear log line, when the service connects as a superuser', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const port = await freePort();
    const running = startService({ DATABASE_URL: database.adminUrl, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    try {
      await waitForHealth(port, running);
    } finally {
      expect(await stopService(running)).toBe(0);
    }
    const role = new URL(process.env.TEST_PG_ADMIN_URL!).username;
    const warnings = logLines(running.output())
      .filter((line) => line.msg.includes('connects to PostgreSQL as'))
      .map((line) => line.msg);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`The service connects to PostgreSQL as "${role}", a superuser`);
    expect(warnings[0]).toContain('DATABASE_MIGRATION_URL');
  });

  it('warns when the service connects as the owner of the tables', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const { result, lines } = await boot({ DATABASE_URL: database.ownerUrl });
    await result?.close();
    expect(lines.filter((line) => line.startsWith('warn'))).toEqual([
      expect.stringContaining(
        `The service connects to PostgreSQL as "${TEST_OWNER_ROLE}", which owns the tables (api_keys, change_request_changes, change_request_events, change_request_reviews, ...)`,
      ),
    ]);
  });

  it('does not warn for the service role, which a DATABASE_MIGRATION_URL owner migrated and granted what it needs', async () => {
    const database = await emptyDatabase();
    const { result, error, lines } = await boot({ DATABASE_URL: database.url, DATABASE_MIGRATION_URL: database.ownerUrl });
    expect(error).toBeUndefined();
    await result!.close();
    expect(result!.url).toBe(database.url);
    expect(result!.applied).toContain('AuditRefusesTruncate1795360000000');
    expect(lines.filter((line) => line.startsWith('warn'))).toEqual([]);
    await withClient(database.url, async (service) => {
      const organizationId = await seedAuditEntry(service);
      await service.query('INSERT INTO flags (organization_id, key, name, type, value) VALUES ($1, $2, $2, $3, $4)', [
        organizationId,
        'k',
        'boolean',
        'true',
      ]);
      await service.query('DELETE FROM flags WHERE organization_id = $1', [organizationId]);
      await expect(service.query('DELETE FROM flag_audit_entries')).rejects.toThrow(DENIED);
    });
  });

  it('explains that migrations need the owner when DATABASE_URL is a role that may not change the schema', async () => {
    const database = await emptyDatabase();
    const { error } = await boot({ DATABASE_URL: database.url });
    expect(error).toBeInstanceOf(DatabaseSetupError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Migrating the database as role "${TEST_SERVICE_ROLE}" failed: .+\\. Migrations run as the role that owns the schema: set DATABASE_MIGRATION_URL`,
      ),
    );
  });
});

describe('an embedded cluster made before the roles', () => {
  it('is handed over to the owner role, and the service runs as the service role', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flagstore-roles-embedded-'));
    chmodSync(dataDir, 0o711); // as root, PostgreSQL runs as `postgres`, which must enter it
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
    try {
      const first = startService(env);
      try {
        await waitForHealth(port, first);
        // Back to how earlier versions left it: the superuser owns the database, the tables and the functions.
        await withSuperuser(dataDir, async (client) => {
          await client.query('ALTER DATABASE flagstore OWNER TO postgres');
          await client.query('REASSIGN OWNED BY flagstore_owner TO postgres');
          await client.query('REVOKE ALL ON ALL TABLES IN SCHEMA public FROM flagstore_service');
          await client.query('DELETE FROM migrations WHERE name = $1', ['AuditRefusesTruncate1795360000000']);
          await client.query('DROP TRIGGER flag_audit_entries_refuse_truncate ON flag_audit_entries');
          await client.query('DROP FUNCTION flag_audit_entries_refuse_truncate()');
        });
      } finally {
        expect(await stopService(first)).toBe(0);
      }

      const second = startService(env);
      try {
        await waitForHealth(port, second);
        expect(second.output()).toContain('Applied migrations: AuditRefusesTruncate1795360000000');
        expect(second.output()).not.toContain('connects to PostgreSQL as');
        await withSuperuser(dataDir, async (client) => {
          const { rows } = await client.query(
            `SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public'
             UNION SELECT DISTINCT pg_get_userbyid(p.proowner) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
             UNION SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'flagstore'`,
          );
          expect(rows).toEqual([{ owner: 'flagstore_owner' }]);
          const service = await client.query(
            `SELECT usename AS role FROM pg_stat_activity WHERE datname = 'flagstore' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
          );
          expect(new Set(service.rows.map((row) => row.role))).toEqual(new Set(['flagstore_service']));
        });
        const created = await fetch(`http://127.0.0.1:${port}/health`);
        expect(created.status).toBe(200);
      } finally {
        expect(await stopService(second)).toBe(0);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** The running embedded cluster of `dataDir`, as its bootstrap superuser (the port is in postmaster.pid). */
async function withSuperuser(dataDir: string, run: (client: Client) => Promise<void>): Promise<void> {
  const password = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
  const port = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3];
  const url = databaseUrlFor(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/`, 'flagstore');
  await withClient(url, run);
}
