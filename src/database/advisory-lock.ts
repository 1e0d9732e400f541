import type { DataSource } from 'typeorm';

/** One database session: a pg Client, or a TypeORM data source whose pool holds a single connection. */
export interface SqlSession {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Runs `run` while `session` holds the session-level advisory lock `key`, waiting (pg_advisory_lock) for as long
 * as another session holds it, and releases the lock once `run` has succeeded. `session` must be one connection
 * that the caller ends as soon as it is done. When `run` fails, the lock is left for the end of that session to
 * free: the session may no longer be able to run the unlock (a TypeORM migration run that fails before its first
 * migration keeps the pool's only connection checked out, so an unlock would wait for it forever).
 */
export async function withAdvisoryLock<T>(session: SqlSession, key: number, run: () => Promise<T>): Promise<T> {
  await session.query('SELECT pg_advisory_lock($1)', [key]);
  const result = await run();
  await session.query('SELECT pg_advisory_unlock($1)', [key]);
  return result;
}

export type LockedRun<T> = { acquired: true; result: T } | { acquired: false };

/**
 * Runs `run` while this process holds the session-level advisory lock `key`, taken with pg_try_advisory_lock on a
 * connection of the pool checked out for the whole run; `{ acquired: false }` at once, without running, when another
 * session holds it. The lock belongs to that connection's session: if the process dies, the connection closes and
 * PostgreSQL frees the lock with it. It is released before the connection goes back to the pool, and a connection
 * that could not release it is closed rather than handed to the next query with the lock still held.
 * Advisory locks are per database, so deployments on separate databases of one server do not exclude each other.
 */
export async function withTryAdvisoryLock<T>(dataSource: DataSource, key: number, run: () => Promise<T>): Promise<LockedRun<T>> {
  const runner = dataSource.createQueryRunner();
  try {
    const connection = (await runner.connect()) as { end(): Promise<void> };
    const [{ acquired }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS acquired', [key])) as { acquired: boolean }[];
    if (!acquired) return { acquired: false };
    try {
      return { acquired: true, result: await run() };
    } finally {
      try {
        await runner.query('SELECT pg_advisory_unlock($1)', [key]);
      } catch {
        // Ending the session frees the lock; a client that is ending is never reused by the pool.
        connection.end().catch(() => undefined);
      }
    }
  } finally {
    await runner.release();
  }
}
