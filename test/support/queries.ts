import { Client } from 'pg';

/**
 * Counts the statements the app sends to PostgreSQL while `work` runs: every round trip of every connection (pg's
 * Client.query, which the pool, TypeORM and the bus's listener all go through), or only those whose text matches
 * `only`. An autocommit statement is one transaction, so the count is an upper bound on the transactions.
 */
export async function queriesDuring(work: () => Promise<unknown>, only?: RegExp): Promise<number> {
  const query = Client.prototype.query;
  let count = 0;
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (!only || only.test(text ?? '')) count += 1;
    return (query as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await work();
  } finally {
    Client.prototype.query = query;
  }
  return count;
}

/** The change feed's read (src/invalidation/change-feed.ts), the one statement that reads what changed. */
export const CHANGE_FEED_READ = /pg_current_snapshot\(\)/;
