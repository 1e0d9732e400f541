import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Global, Injectable, Logger, Module, OnModuleInit } from '@nestjs/common';
import { RedisConnections } from './redis/redis.module';

/** What an in-memory cache may need to drop: a revoked API key, or an organization's changed flags. */
export type InvalidationTopic = 'apiKey' | 'flags';

const CHANNEL = 'flagstore:invalidation';

/**
 * Tells every in-memory cache that something it holds is stale: at once in this process, and through
 * Redis pub/sub in every other instance when REDIS_URL is set.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit {
  private readonly logger = new Logger(InvalidationBus.name);
  private readonly local = new EventEmitter();
  private readonly instanceId = randomUUID();

  constructor(private readonly redis: RedisConnections) {
    this.local.setMaxListeners(50);
  }

  async onModuleInit(): Promise<void> {
    const subscriber = this.redis.subscriber;
    if (!subscriber) return;
    await subscriber.subscribe(CHANNEL);
    subscriber.on('message', (_channel: string, raw: string) => {
      try {
        const { origin, topic, id } = JSON.parse(raw) as { origin: string; topic: InvalidationTopic; id: string };
        if (origin !== this.instanceId) this.local.emit(topic, id);
      } catch (error) {
        this.logger.warn(`Ignoring malformed invalidation message: ${String(error)}`);
      }
    });
  }

  publish(topic: InvalidationTopic, id: string): void {
    this.local.emit(topic, id);
    this.redis.commands
      ?.publish(CHANNEL, JSON.stringify({ origin: this.instanceId, topic, id }))
      .catch((error: unknown) => this.logger.error(`Could not publish invalidation: ${String(error)}`));
  }

  subscribe(topic: InvalidationTopic, handler: (id: string) => void): void {
    this.local.on(topic, handler);
  }
}

@Global()
@Module({ providers: [InvalidationBus], exports: [InvalidationBus] })
export class InvalidationBusModule {}
