import type { DataSource } from 'typeorm';

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
