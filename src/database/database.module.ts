import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { dataSourceOptions } from './data-source-options';
import { Sql } from './sql';

/** The URL of the (already migrated) database, for the few pieces that need their own connection. */
export const DATABASE_URL = Symbol('DATABASE_URL');

/**
 * The TypeORM data source (already migrated by the caller) and the request-scoped transaction context:
 * a transaction opened anywhere in a request (or by a non-HTTP caller) travels with it, so every
 * repository's `Sql` writes through the same one.
 */
@Module({})
export class DatabaseModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_URL, useValue: databaseUrl }, Sql],
      exports: [DATABASE_URL, Sql],
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions(databaseUrl)),
        ClsModule.forRoot({
          global: true,
          middleware: { mount: true },
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
