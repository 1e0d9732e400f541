import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { DOCKER_DIR, readCompose, resolvedEnvironment } from '../support/docker-files';
import { describeWithBinaries, postgresBinDir } from '../support/servers/binaries';
import { PostgresServer, startPostgresServer } from '../support/servers/postgres-server';

/**
 * docker/postgres-init.sh, run as the postgres image runs it on an empty volume (its environment from compose.yml,
 * psql as the superuser), on a PostgreSQL of the test's own: it makes the roles and database of README
 * "Database roles", neither role a superuser, and compose's instances' URLs name them.
 */
const bin = postgresBinDir();

describeWithBinaries('docker/postgres-init.sh on a real PostgreSQL', { postgres: bin })('docker/postgres-init.sh', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await startPostgresServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates flagstore_owner (owning the database flagstore) and flagstore_service, neither a superuser', async () => {
    const services = readCompose().services;
    const env = resolvedEnvironment(services.postgres, {});
    execFileSync('sh', [join(DOCKER_DIR, 'postgres-init.sh')], {
      env: { PATH: `${bin}:${process.env.PATH}`, PGHOST: '127.0.0.1', PGPORT: String(server.port), ...env },
      stdio: 'pipe',
    });
    const client = new Client({ connectionString: server.url });
    await client.connect();
    try {
      const roles = await client.query<{ rolname: string; rolsuper: boolean; rolcreaterole: boolean; rolcreatedb: boolean; rolcanlogin: boolean; has_password: boolean }>(
        `SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolpassword IS NOT NULL AS has_password
           FROM pg_authid WHERE rolname LIKE 'flagstore%' ORDER BY rolname`,
      );
      expect(roles.rows).toEqual(
        ['flagstore_owner', 'flagstore_service'].map((rolname) => ({ rolname, rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: true, has_password: true })),
      );
      const owner = await client.query<{ owner: string }>(`SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'flagstore'`);
      expect(owner.rows).toEqual([{ owner: 'flagstore_owner' }]);
      const membership = await client.query(`SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
        WHERE r.rolname LIKE 'flagstore%' OR u.rolname LIKE 'flagstore%'`);
      expect(membership.rowCount).toBe(0);
    } finally {
      await client.end();
    }
    const instance = resolvedEnvironment(services['flagstore-1'], {});
    expect(new URL(instance.DATABASE_URL).username).toBe('flagstore_service');
    expect(new URL(instance.DATABASE_MIGRATION_URL).username).toBe('flagstore_owner');
  });
});
