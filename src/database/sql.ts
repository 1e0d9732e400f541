import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

/**
 * Where statements run: `Sql`, autocommit on the pool (each statement a transaction of its own), or a
 * `Transaction`, on the connection of one transaction. Repositories hold neither: each method takes the one to
 * run on as its first parameter, `db: Db`, or `tx: Transaction` when its statement takes a lock meant to last
 * for the rest of a transaction (a row lock, a claim), which autocommit would drop at once. Code handed a
 * transaction (or any `Db`) passes it on to every call that must be in it, and never uses `this.sql`
 * (transaction-scope.spec.ts fails if it does).
 *
 * Statements are parameterised SQL, answered as rows whatever the statement; columns are aliased to the row
 * type's camelCase names in the SQL itself (there are no ORM entities).
 */
export abstract class Db {
  protected constructor(private readonly manager: EntityManager) {}

  async rows<T>(sql: string, parameters: unknown[] = []): Promise<T[]> {
    return rowsOf<T>(await this.manager.query(sql, parameters));
  }

  /** The first row, or null when the statement matched none. */
  async row<T>(sql: string, parameters: unknown[] = []): Promise<T | null> {
    const [first] = await this.rows<T>(sql, parameters);
    return first ?? null;
  }
}

/** Autocommit: each statement is a transaction of its own, on whichever connection of the pool is free. */
@Injectable()
export class Sql extends Db {
  constructor(dataSource: DataSource) {
    super(dataSource.manager);
  }
}

/**
 * The statements of one transaction, on its own connection: only `Transactions.run` makes one, and hands it to
 * the work it runs. Its private state makes it a type of its own: an `Sql` is not a `Transaction`, so the
 * compiler refuses to run a method that takes one on autocommit.
 */
export class Transaction extends Db {
  private ended = false;

  constructor(manager: EntityManager) {
    super(manager);
  }

  /** Called by `Transactions.run` once the work has settled, before the commit or the rollback. */
  end(): void {
    this.ended = true;
  }

  /**
   * A statement sent once the work has settled would land after the commit (or the rollback) or not run at all:
   * it is a bug (a statement not awaited, a transaction kept past its run), said as such, and not mistaken for
   * the database being away, which TypeORM's error for a released connection would suggest.
   */
  override async rows<T>(sql: string, parameters: unknown[] = []): Promise<T[]> {
    if (this.ended) throw new Error('A statement was sent on a transaction whose run had already ended');
    return super.rows<T>(sql, parameters);
  }
}

/**
 * TypeORM's postgres driver answers UPDATE and DELETE (RETURNING or not) with `[rows, affectedCount]` and every
 * other statement with the rows (PostgresQueryRunner.query). A SELECT or INSERT result never has that shape:
 * its elements are row objects, never a number.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

/** The statement broke the named unique constraint (PostgreSQL error 23505). */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driverError = error instanceof QueryFailedError ? (error.driverError as { code?: string; constraint?: string }) : undefined;
  return driverError?.code === '23505' && driverError.constraint === constraint;
}
