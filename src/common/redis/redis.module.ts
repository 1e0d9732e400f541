import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

/**
 * Redis connections, only when REDIS_URL is set: one for commands (rate-limit counters, publishing)
 * and one in subscriber mode (invalidation messages).
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  readonly commands?: Redis;
  readonly subscriber?: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (config.redisUrl) {
      const options = { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true };
      this.commands = new Redis(config.redisUrl, options);
      this.subscriber = new Redis(config.redisUrl, options);
    }
  }

  get enabled(): boolean {
    return this.commands !== undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.commands?.quit().catch(() => undefined), this.subscriber?.quit().catch(() => undefined)]);
  }
}

@Global()
@Module({ providers: [RedisConnections], exports: [RedisConnections] })
export class RedisModule {}
