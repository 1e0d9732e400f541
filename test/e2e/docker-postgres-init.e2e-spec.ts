import { execFileSync } from 'node:child_process';
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { DOCKER_DIR, initEnvVariables, readCompose, resolvedEnvironment } from '../support/docker-files';
import { describeWithBinaries, postgresBinDir } from '../support/servers/binaries';
import { PostgresServer, startPostgresServer } from '../support/servers/postgres-server';

/**
 * docker/postgres-init.sh, run as the postgres image runs it on an empty volume (its environment from compose.yml,
 * psql as the superuser), on a PostgreSQL of the test's own: it makes the owner and service roles and the
 * database, neither role a superuser, with the passwords compose gives it, and compose's instances' URLs log in
 * as those roles with those passwords.
 */
const bin = postgresBinDir();

/**
 * Whether `password` is the one PostgreSQL stored for `role` (pg_authid.rolpassword): a SCRAM-SHA-256 verifier
 * (PostgreSQL's default), or an MD5 hash. What a client logging in with that password is checked against.
 */
function isPasswordOf(stored: string, role: string, password: string): boolean {
  const scram = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(stored);
  if (scram) {
    const [, iterations, salt, storedKey, serverKey] = scram;
    const salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), Number(iterations), 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    const expectedStored = createHash('sha256').update(clientKey).digest();
    const expectedServer = createHmac('sha256', salted).update('Server Key').digest();
    return timingSafeEqual(expectedStored, Buffer.from(storedKey, 'base64')) && timingSafeEqual(expectedServer, Buffer.from(serverKey, 'base64'));
  }
  if (stored.startsWith('md5'))
    return (
      stored ===
      `md5${createHash('md5')
        .update(password + role)
        .digest('hex')}`
    );
  throw new Error(`unknown password format for ${role}: ${stored.slice(0, 16)}…`);
}

describeWithBinaries('docker/postgres-init.sh on a real PostgreSQL', { postgres: bin })('docker/postgres-init.sh', () => {
  let server: PostgresServer;
  const services = readCompose().services;
  /** The postgres service's environment and an instance's, as Compose gives them with the .env init-env.sh writes. */
  const variables = initEnvVariables();
  const env = resolvedEnvironment(services.postgres, variables);
  const instance = resolvedEnvironment(services['flagstore-1'], variables);

  beforeAll(async () => {
    server = await startPostgresServer();
    // As the image's entrypoint runs it: with the container's environment, psql reaching the server as postgres.
    execFileSync('sh', [join(DOCKER_DIR, 'postgres-init.sh')], {
      env: { PATH: `${bin}:${process.env.PATH}`, PGHOST: '127.0.0.1', PGPORT: String(server.port), ...env },
      stdio: 'pipe',
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates flagstore_owner (owning the database flagstore) and flagstore_service, neither a superuser', async () => {
    const client = new Client({ connectionString: server.url });
    await client.connect();
    try {
      const roles = await client.query<{
        rolname: string;
        rolsuper: boolean;
        rolcreaterole: boolean;
        rolcreatedb: boolean;
        rolcanlogin: boolean;
        has_password: boolean;
      }>(
        `SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolpassword IS NOT NULL AS has_password
           FROM pg_authid WHERE rolname LIKE 'flagstore%' ORDER BY rolname`,
      );
      expect(roles.rows).toEqual(
        ['flagstore_owner', 'flagstore_service'].map((rolname) => ({
          rolname,
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolcanlogin: true,
          has_password: true,
        })),
      );
      const owner = await client.query<{ owner: string }>(`SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'flagstore'`);
      expect(owner.rows).toEqual([{ owner: 'flagstore_owner' }]);
      const membership = await client.query(`SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
        WHERE r.rolname LIKE 'flagstore%' OR u.rolname LIKE 'flagstore%'`);
      expect(membership.rowCount).toBe(0);
    } finally {
      await client.end();
    }
    expect(new URL(instance.DATABASE_URL).username).toBe('flagstore_service');
    expect(new URL(instance.DATABASE_MIGRATION_URL).username).toBe('flagstore_owner');
  });

  it("gives each role the password compose passes to it, the one in the instances' URL for that role", async () => {
    const client = new Client({ connectionString: server.url });
    await client.connect();
    try {
      const stored = await client.query<{ rolname: string; rolpassword: string }>(
        `SELECT rolname, rolpassword FROM pg_authid WHERE rolname LIKE 'flagstore%' ORDER BY rolname`,
      );
      const passwordOf = Object.fromEntries(stored.rows.map((row) => [row.rolname, row.rolpassword]));
      const expected: [string, string, string][] = [
        ['flagstore_owner', env.FLAGSTORE_OWNER_PASSWORD, instance.DATABASE_MIGRATION_URL],
        ['flagstore_service', env.FLAGSTORE_SERVICE_PASSWORD, instance.DATABASE_URL],
      ];
      for (const [role, given, url] of expected) {
        expect({ role, given: isPasswordOf(passwordOf[role], role, given) }).toEqual({ role, given: true });
        expect({ role, url: isPasswordOf(passwordOf[role], role, decodeURIComponent(new URL(url).password)) }).toEqual({ role, url: true });
        expect({ role, other: isPasswordOf(passwordOf[role], role, `${given}-not`) }).toEqual({ role, other: false });
      }
    } finally {
      await client.end();
    }
  });
});
