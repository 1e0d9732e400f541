import { Db } from './sql';

/** One page of a table's rows, newest first, and how many rows match in all. */
export interface PagedRows<T> {
  rows: T[];
  total: number;
}

/**
 * A page of `table`'s rows matching `where` (with its `parameters`), newest first (`created_at DESC, id DESC`), and
 * the total in the same statement through a window count. Past the last page the count has no row to ride on, so
 * that one case costs a second statement.
 */
export async function pagedRows<T>(
  db: Db,
  query: { columns: string; table: string; where: string; parameters: unknown[]; offset: number; limit: number },
): Promise<PagedRows<T>> {
  const { columns, table, where, parameters, offset, limit } = query;
  const rows = await db.rows<T & { total: number }>(
    `SELECT ${columns}, count(*) OVER ()::int AS total FROM ${table} WHERE ${where}
     ORDER BY created_at DESC, id DESC OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
    [...parameters, offset, limit],
  );
  if (rows.length > 0 || offset === 0) {
    return { rows: rows.map(({ total: _total, ...row }) => row as T), total: rows[0]?.total ?? 0 };
  }
  const [{ total }] = await db.rows<{ total: number }>(`SELECT count(*)::int AS total FROM ${table} WHERE ${where}`, parameters);
  return { rows: [], total };
}
