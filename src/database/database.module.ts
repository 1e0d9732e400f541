import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { dataSourceOptions } from './data-source-options';
import { Sql } from './sql';
import { Transactions } from './transactions';

/** The URL of the (already migrated) database, for the few pieces that need their own connection. */
export const DATABASE_URL = Symbol('DATABASE_URL');

/**
 * The TypeORM data source (already migrated by the caller) and the transaction context: a transaction opened
 * through `Transactions` travels with the async calls made inside it, so every repository's `Sql` writes
 * through the same one.
 */
@Module({})
export class DatabaseModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_URL, useValue: databaseUrl }, Sql, Transactions],
      exports: [DATABASE_URL, Sql, Transactions],
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(databaseUrl)),
        ClsModule.forRoot({
          global: true,
          // No context per request: a transaction opens its own (Transactions), and the storage is off otherwise.
          middleware: { mount: false },
          plugins: [
            new ClsPluginTransactional({
              imports: [TypeOrmModule],
              adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
            }),
          ],
        }),
      ],
    };
  }
}
