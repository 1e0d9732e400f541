import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { FlagsModule } from '../flags/flags.module';
import { CONFIG_THROTTLER, CONFIG_WINDOW_MS, ConfigRateLimitModule } from './config-rate-limiter';
import { ConfigThrottlerStorage } from './config-throttler.storage';
import { FlagConfigCache } from './flag-config.cache';
import { FlagConfigController } from './flag-config.controller';
import { FlagConfigPoll } from './flag-config-poll';

@Module({
  imports: [
    FlagsModule,
    ConfigRateLimitModule,
    ThrottlerModule.forRootAsync({
      imports: [ConfigRateLimitModule],
      inject: [APP_CONFIG, ConfigThrottlerStorage],
      useFactory: (config: AppConfig, storage: ConfigThrottlerStorage) => ({
        throttlers: [{ name: CONFIG_THROTTLER, ttl: CONFIG_WINDOW_MS, limit: config.configRateLimitPerMinute }],
        storage,
        // Retry-After comes with the 429 error itself, identically on the lean path.
        setHeaders: false,
      }),
    }),
  ],
  controllers: [FlagConfigController],
  providers: [FlagConfigCache, FlagConfigPoll],
  exports: [FlagConfigPoll],
})
export class FlagConfigModule {}
