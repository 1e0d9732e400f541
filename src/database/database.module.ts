import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { dataSourceOptions } from './data-source-options';

/**
 * The TypeORM data source (already migrated by the caller) and the request-scoped transaction context:
 * a transaction opened anywhere in a request travels with it, so repositories, services and the audit
 * interceptor all write through the same one.
 */
/** The URL of the (already migrated) database, for the few pieces that need their own connection. */
export const DATABASE_URL = Symbol('DATABASE_URL');

@Module({})
export class DatabaseModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_URL, useValue: databaseUrl }],
      exports: [DATABASE_URL],
      imports: [
        TypeOrmModule.forRoot({ ...dataSourceOptions(databaseUrl), autoLoadEntities: true }),
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
