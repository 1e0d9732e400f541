import { DynamicModule, Module } from '@nestjs/common';
import { InvalidationBusModule } from '../invalidation/invalidation-bus';
import { RedisModule } from '../redis/redis.module';
import { AppConfig } from '../config/app-config';
import { ClockModule } from '../common/clock';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { MembersModule } from '../people/members.module';

/**
 * What the CLI's commands run on, and nothing else: the configuration, the (already migrated) database with its
 * transactions, and OrganizationsService and PeopleService, the same services the admin API calls. The invalidation bus (over Redis
 * when REDIS_URL is set, PostgreSQL otherwise) is there so that a key revoked here is dropped by the running
 * servers' caches, as when it is revoked through the admin API.
 *
 * No HTTP, guards, scheduler, object store or signing secret: AppModule's other modules serve requests, and
 * booting them for one service call only cost start-up time and resources the command never used.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(databaseUrl),
        ClockModule,
        RedisModule,
        InvalidationBusModule,
        OrganizationsModule,
        MembersModule,
      ],
    };
  }
}
