import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { AuthModule } from '../auth/auth.module';
import { ApiExceptionFilter } from '../http/api-exception.filter';
import { UnknownQueryParameters } from '../http/query-parameters';
import { InvalidationBusModule } from '../invalidation/invalidation-bus';
import { ChangeFeedModule } from '../invalidation/change-feed';
import { RedisModule } from '../redis/redis.module';
import { ClockModule } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { SigningSecretModule } from '../config/signing-secret';
import { DatabaseModule } from '../database/database.module';
import { FlagConfigModule } from '../flag-config/flag-config.module';
import { FlagsModule } from '../flags/flags.module';
import { EventsModule } from '../events/events.module';
import { HealthModule } from '../health/health.module';
import { LoggingModule } from '../logging/logging.module';
import { MailModule } from '../mail/mail.module';
import { MetricsModule } from '../metrics/metrics.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { PeopleModule } from '../people/people.module';
import { QuotaModule } from '../quota/quota.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { ReviewModule } from '../review/review.module';
import { ChangeRequestsModule } from '../change-requests/change-requests.module';
import { StorageModule } from '../storage/storage.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { SURFACES } from './surfaces';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule,
        SigningSecretModule,
        LoggingModule,
        DatabaseModule.forRoot(databaseUrl),
        RedisModule,
        InvalidationBusModule,
        ChangeFeedModule,
        RateLimitModule,
        OrganizationsModule,
        PeopleModule,
        AuthModule,
        // Routes register in module order: /flags/quota and /flags/config must come before FlagsModule's
        // /flags/:flagId, so these modules are listed (and first imported) ahead of it.
        QuotaModule,
        FlagConfigModule,
        FlagsModule,
        ReviewModule,
        ChangeRequestsModule,
        StorageModule,
        EventsModule,
        HealthModule,
        MailModule,
        WebhooksModule,
        MetricsModule.forRoot(config),
      ],
      providers: [
        { provide: APP_FILTER, useValue: new ApiExceptionFilter(SURFACES) },
        // Global interceptors run before any a route names (FlagWriteInterceptor's transaction included).
        { provide: APP_INTERCEPTOR, useValue: new UnknownQueryParameters(SURFACES) },
      ],
    };
  }
}
