import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { Client } from 'pg';
import { DATABASE_URL } from '../database/database.module';
import { RedisConnections } from './redis/redis.module';

/** What an in-memory cache may need to drop: a revoked API key, or an organization's changed flags. */
export type InvalidationTopic = 'apiKey' | 'flags';

interface Message {
  origin: string;
  topic: InvalidationTopic;
  id: string;
}

const CHANNEL = 'flagstore_invalidation';
const RECONNECT_MS = 1_000;

/**
 * Tells every in-memory cache that something it holds is stale: at once in this process, and in every
 * other process on the same database (other instances, the CLI) through Redis pub/sub when REDIS_URL is
 * set, or PostgreSQL LISTEN/NOTIFY otherwise.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(InvalidationBus.name);
  private readonly local = new EventEmitter();
  private readonly instanceId = randomUUID();
  private listener?: Client;
  private publisher?: Client;
  private stopped = false;
  /** Publications not yet handed to Redis or PostgreSQL; a short-lived process (the CLI) waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly redis: RedisConnections,
    @Inject(DATABASE_URL) private readonly databaseUrl: string,
  ) {
    this.local.setMaxListeners(50);
  }

  async onModuleInit(): Promise<void> {
    if (this.redis.subscriber) {
      await this.redis.subscriber.subscribe(CHANNEL);
      this.redis.subscriber.on('message', (_channel: string, raw: string) => this.receive(raw));
    } else {
      await this.listen();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.listener?.end().catch(() => undefined), this.publisher?.end().catch(() => undefined)]);
  }

  publish(topic: InvalidationTopic, id: string): void {
    this.local.emit(topic, id);
    const message = JSON.stringify({ origin: this.instanceId, topic, id } satisfies Message);
    const sent = this.redis.commands
      ? this.redis.commands.publish(CHANNEL, message)
      : this.notify(message);
    const tracked = sent
      .catch((error: unknown) => this.logger.error(`Could not publish an invalidation: ${String(error)}`))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  subscribe(topic: InvalidationTopic, handler: (id: string) => void): void {
    this.local.on(topic, handler);
  }

  private receive(raw: string): void {
    try {
      const { origin, topic, id } = JSON.parse(raw) as Message;
      if (origin !== this.instanceId) this.local.emit(topic, id);
    } catch (error) {
      this.logger.warn(`Ignoring a malformed invalidation message: ${String(error)}`);
    }
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    client.on('notification', (notification) => notification.payload && this.receive(notification.payload));
    client.on('error', (error) => {
      this.logger.warn(`Invalidation listener lost its connection: ${error.message}`);
      this.listener = undefined;
      client.end().catch(() => undefined);
      this.retryListen();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
  }

  private retryListen(): void {
    if (this.stopped) return;
    setTimeout(() => this.listen().catch(() => this.retryListen()), RECONNECT_MS).unref();
  }

  private async notify(message: string): Promise<void> {
    if (!this.publisher) {
      const client = new Client({ connectionString: this.databaseUrl });
      client.on('error', () => {
        if (this.publisher === client) this.publisher = undefined;
      });
      this.publisher = client;
      await client.connect();
    }
    await this.publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, message]);
  }
}

@Global()
@Module({ providers: [InvalidationBus], exports: [InvalidationBus] })
export class InvalidationBusModule {}
