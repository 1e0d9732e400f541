import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source-options';
import { Sql } from './sql';
import { Transactions } from './transactions';

/** The URL of the (already migrated) database, for the few pieces that need their own connection. */
export const DATABASE_URL = Symbol('DATABASE_URL');

/**
 * The TypeORM data source (already migrated by the caller), `Sql` (autocommit statements on its pool) and
 * `Transactions` (which opens a transaction and hands it to the work as a `Transaction`).
 */
@Module({})
export class DatabaseModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_URL, useValue: databaseUrl }, Sql, Transactions],
      exports: [DATABASE_URL, Sql, Transactions],
      imports: [TypeOrmModule.forRoot(dataSourceOptions(databaseUrl))],
    };
  }
}
