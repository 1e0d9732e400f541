import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { QueryFailedError } from 'typeorm';

/**
 * The one way repositories reach PostgreSQL: parameterised SQL, run in the transaction that the current
 * request or caller opened (autocommit when there is none), answered as rows whatever the statement.
 * Columns are aliased to the row type's camelCase names in the SQL itself; there are no ORM entities.
 */
@Injectable()
export class Sql {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async rows<T>(sql: string, parameters: unknown[] = []): Promise<T[]> {
    return rowsOf<T>(await this.txHost.tx.query(sql, parameters));
  }

  /** The first row, or null when the statement matched none. */
  async row<T>(sql: string, parameters: unknown[] = []): Promise<T | null> {
    const [first] = await this.rows<T>(sql, parameters);
    return first ?? null;
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
