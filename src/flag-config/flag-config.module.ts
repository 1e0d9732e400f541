import { Module } from '@nestjs/common';
import { FlagsModule } from '../flags/flags.module';
import { FlagConfigCache } from './flag-config.cache';
import { FlagConfigMetrics } from './flag-config.metrics';
import { FlagConfigController } from './flag-config.controller';
import { FlagConfigPoll } from './flag-config-poll';
import { SIGNING_SECRET } from '../config/signing-secret';
import { OfrepController } from './ofrep/ofrep.controller';
import { ConfigStreamController } from './stream/config-stream.controller';
import { ConfigStreamHub } from './stream/config-stream.hub';
import { StreamSlots } from './stream/stream-slots';
import { STREAM_TOKENS, StreamTokens } from './stream/stream-token';

@Module({
  imports: [FlagsModule],
  // The stream's literal path is registered before the config route's.
  controllers: [ConfigStreamController, FlagConfigController, OfrepController],
  providers: [
    FlagConfigMetrics,
    FlagConfigCache,
    FlagConfigPoll,
    ConfigStreamHub,
    StreamSlots,
    {
      provide: STREAM_TOKENS,
      inject: [SIGNING_SECRET],
      useFactory: (secret: Buffer) => new StreamTokens(secret),
    },
  ],
  exports: [FlagConfigPoll, ConfigStreamHub],
})
export class FlagConfigModule {}
