import { Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Redis connections, only when REDIS_URL is set: one for commands (rate-limit leases, publishing) and one
 * in subscriber mode (invalidation messages). Both reconnect on their own for as long as the process runs.
 *
 * Commands fail fast while Redis is away (no offline queue, one try, a 500 ms timeout): their callers have
 * a fallback (per-instance counting, the bus's outbox) and must not make requests wait. The subscriber
 * connects lazily and never resubscribes by itself: the invalidation bus subscribes on every `ready`.
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisConnections.name);
  readonly commands?: Redis;
  readonly subscriber?: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (!config.redisUrl) return;
    const retryStrategy = (attempt: number) => Math.min(100 * attempt, 1_000);
    this.commands = this.watch(
      'commands',
      new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy }),
    );
    this.subscriber = this.watch(
      'subscriber',
      new Redis(config.redisUrl, { lazyConnect: true, autoResubscribe: false, maxRetriesPerRequest: null, retryStrategy }),
    );
  }

  get enabled(): boolean {
    return this.commands !== undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.commands, this.subscriber].map((connection) => connection && close(connection)));
  }

  /** Logs a lost connection once per outage (ioredis would print every retry as an unhandled error). */
  private watch(name: string, connection: Redis): Redis {
    let down = false;
    connection.on('error', (error: Error) => {
      if (down) return;
      down = true;
      this.logger.warn(`Redis ${name} connection lost: ${error.message}; reconnecting`);
    });
    connection.on('ready', () => {
      if (down) this.logger.log(`Redis ${name} connection is back`);
      down = false;
    });
    return connection;
  }
}

/** QUIT when connected (lets pending replies arrive), otherwise just stop reconnecting. */
async function close(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    await connection.quit().catch(() => connection.disconnect());
  } else {
    connection.disconnect();
  }
}

@Global()
@Module({ providers: [RedisConnections], exports: [RedisConnections] })
export class RedisModule {}
