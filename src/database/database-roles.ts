import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import { withAdvisoryLock } from './advisory-lock';
import { ROLE_LOCK_KEY } from './advisory-lock-keys';

/**
 * Two roles: the owner owns the schema and runs the migrations; the service connects as a role that owns nothing
 * and holds only what its queries need. What it needs is defined here, next to the code, and granted by the
 * owner after every migration run, so a table added by a later migration is covered without a step by hand.
 */

export interface RoleCredentials {
  name: string;
  password: string;
}

/** Tables the service reads and appends to, never changes: the audit log and the review setting's history. */
export const APPEND_ONLY_TABLES: readonly string[] = ['flag_audit_entries', 'organization_review_history'];
/** Tables the service only reads: which migrations ran (the migration runner is the owner). */
const READ_ONLY_TABLES: readonly string[] = ['migrations'];

/**
 * A role's password derived from a secret the caller already keeps (the embedded cluster's superuser password):
 * whoever can read that secret is a superuser anyway, and no further file has to be kept.
 */
export function derivedPassword(secret: string, role: string): string {
  return createHmac('sha256', secret).update(`flagstore database role ${role}`).digest('base64url');
}

/** The same server, as another role (and optionally another database). */
export function urlAs(url: string, role: RoleCredentials, database?: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(role.name);
  parsed.password = encodeURIComponent(role.password);
  if (database !== undefined) parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the given login roles if they are missing and (re)sets their passwords. They get no attribute beyond
 * LOGIN: not superuser, no CREATEDB, no CREATEROLE, no membership in anything. Needs a superuser (or CREATEROLE).
 */
export async function ensureLoginRoles(superuserUrl: string, roles: RoleCredentials[]): Promise<void> {
  await withClient(superuserUrl, async (client) => {
    await withAdvisoryLock(client, ROLE_LOCK_KEY, async () => {
      for (const role of roles) {
        const name = client.escapeIdentifier(role.name);
        const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.name]);
        if (!rowCount) await client.query(`CREATE ROLE ${name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
        await client.query(
          `ALTER ROLE ${name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${client.escapeLiteral(role.password)}`,
        );
      }
    });
  });
}

/**
 * Makes `owner` the owner of the database (creating it if needed) and of every table, sequence, view and function
 * in its public schema. A cluster made before the roles existed had all of them owned by the superuser that ran
 * the migrations; the owner has to own them to migrate them further. Only for a cluster the service runs itself.
 */
export async function ensureDatabaseOwnedBy(superuserUrl: string, database: string, owner: string): Promise<void> {
  await withClient(superuserUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    const [db, role] = [client.escapeIdentifier(database), client.escapeIdentifier(owner)];
    await client.query(rowCount ? `ALTER DATABASE ${db} OWNER TO ${role}` : `CREATE DATABASE ${db} OWNER ${role}`);
  });
  const parsed = new URL(superuserUrl);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  await withClient(parsed.toString(), (client) => adoptSchema(client, owner));
}

async function adoptSchema(client: Client, owner: string): Promise<void> {
  const statements = async (sql: string) => (await client.query<{ statement: string }>(sql, [owner])).rows.map((row) => row.statement);
  const ownerOid = '(SELECT oid FROM pg_roles WHERE rolname = $1)';
  const relations = (kinds: string) => `
    SELECT format('ALTER TABLE %I.%I OWNER TO %I', n.nspname, c.relname, $1::text) AS statement
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN (${kinds}) AND c.relowner <> ${ownerOid}`;
  // Tables first: their indexes and the sequences they own follow them. Then what is left on its own.
  for (const statement of await statements(relations(`'r', 'p'`))) await client.query(statement);
  for (const statement of await statements(relations(`'S', 'v', 'm'`))) await client.query(statement);
  const functions = await statements(`
    SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, $1::text) AS statement
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.proowner <> ${ownerOid}`);
  for (const statement of functions) await client.query(statement);
}

/** Something that runs SQL as the owner: a pg client or a TypeORM data source. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Run by the owner after migrating: the service role may read and write the tables of the current schema, read
 * and append to the audit log only, read the migrations table, and use the sequences. It gets no TRUNCATE,
 * REFERENCES or TRIGGER, and owns nothing. LISTEN/NOTIFY and advisory locks need no grant.
 */
export async function grantServiceRole(owner: Queryable, serviceRole: string): Promise<void> {
  const role = quoteIdentifier(serviceRole);
  const [{ schema }] = (await owner.query('SELECT current_schema() AS schema')) as { schema: string }[];
  const quotedSchema = quoteIdentifier(schema);
  await owner.query(`GRANT USAGE ON SCHEMA ${quotedSchema} TO ${role}`);
  await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${quotedSchema} TO ${role}`);
  await owner.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${quotedSchema} TO ${role}`);
  const restrict = async (tables: readonly string[], privileges: string) => {
    for (const table of tables) {
      const [{ exists }] = (await owner.query('SELECT to_regclass($1) IS NOT NULL AS exists', [table])) as { exists: boolean }[];
      if (!exists) continue;
      await owner.query(`REVOKE ALL ON ${quoteIdentifier(table)} FROM ${role}`);
      await owner.query(`GRANT ${privileges} ON ${quoteIdentifier(table)} TO ${role}`);
    }
  };
  await restrict(APPEND_ONLY_TABLES, 'SELECT, INSERT');
  await restrict(READ_ONLY_TABLES, 'SELECT');
}

export interface ServiceRoleReport {
  role: string;
  superuser: boolean;
  /** Tables of the schema the role owns, itself or through a role it belongs to. */
  ownedTables: string[];
  /** Append-only tables the role may nevertheless UPDATE, DELETE or TRUNCATE. */
  changeableAppendOnlyTables: string[];
}

/** What the role behind `url` may do that the service should not be able to. */
export async function inspectServiceRole(url: string): Promise<ServiceRoleReport> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<ServiceRoleReport>(
      `SELECT current_user AS role,
              (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
              ARRAY(SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
                      AND pg_has_role(current_user, c.relowner, 'USAGE')
                    ORDER BY c.relname) AS "ownedTables",
              ARRAY(SELECT t FROM unnest($1::text[]) AS t
                    WHERE to_regclass(t) IS NOT NULL AND has_table_privilege(current_user, t, 'UPDATE, DELETE, TRUNCATE')
                    ORDER BY t) AS "changeableAppendOnlyTables"`,
      [APPEND_ONLY_TABLES],
    );
    return rows[0];
  });
}

const HOW = 'see docs/database-roles.md';

/** The boot warnings for a role the service should not run as; none for a role that owns nothing. */
export function serviceRoleWarnings(report: ServiceRoleReport): string[] {
  const runAs = `Connect the service (DATABASE_URL) as a role that owns nothing and migrate as the owner (DATABASE_MIGRATION_URL); ${HOW}`;
  if (report.superuser) {
    return [
      `The service connects to PostgreSQL as "${report.role}", a superuser: it could change or empty the audit log and alter anything in the database. ${runAs}.`,
    ];
  }
  if (report.ownedTables.length > 0) {
    const tables = report.ownedTables.length > 4 ? `${report.ownedTables.slice(0, 4).join(', ')}, ...` : report.ownedTables.join(', ');
    return [
      `The service connects to PostgreSQL as "${report.role}", which owns the tables (${tables}): it could drop them or the audit log's triggers. ${runAs}.`,
    ];
  }
  if (report.changeableAppendOnlyTables.length > 0) {
    return [
      `The service's PostgreSQL role "${report.role}" may UPDATE, DELETE or TRUNCATE ${report.changeableAppendOnlyTables.join(', ')}, which it only reads and appends to: revoke those privileges (${HOW}).`,
    ];
  }
  return [];
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
