/**
 * Every PostgreSQL advisory lock key of the service, in one place so that no two rules share a key by accident.
 * The one-bigint keys below and the two-integer key of the stream slots are separate key spaces in PostgreSQL:
 * they never collide. Advisory locks are per database, so deployments on separate databases of one server do not
 * exclude each other.
 */

/**
 * Serialises the migration runs of instances booting together, and the service role's grants that follow them
 * (runMigrations, data-source-options.ts): one migrates while the others wait, then find nothing left to apply.
 */
export const MIGRATION_LOCK_KEY = 7_311_020_418;

/**
 * Serialises the creation of the login roles and the setting of their passwords by concurrent boots (or test runs)
 * on one server (ensureLoginRoles, database-roles.ts): roles are cluster-wide, so two could create the same one.
 */
export const ROLE_LOCK_KEY = 7_311_020_419;

/**
 * Lets one instance at a time do the storage sweep's shared work, the database rows and the shared object store
 * (StorageSweeper, storage-sweeper.ts): an instance that finds it held skips that work until its next run.
 */
export const SWEEP_LOCK_KEY = 7_311_020_420;

/**
 * The first half of the two-integer key that serialises the takes of one API key's config stream slots, the second
 * being hashtext(key id): the SQL function take_config_stream_slot, created by the migration
 * migrations/1795800000000-StreamSlots.ts, takes `pg_advisory_xact_lock(73110204, hashtext(slot_key_id::text))`.
 * Migrations are compiled on their own (migrations/tsconfig.json: rootDir is migrations/) and cannot import this
 * file, so the migration writes the number itself; advisory-lock-keys.spec.ts fails if the two ever differ.
 */
export const STREAM_SLOT_LOCK_KEY = 73_110_204;
