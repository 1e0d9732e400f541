import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { BeforeApplicationShutdown, Global, Inject, Injectable, Logger, Module, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DATABASE_URL } from '../database/database.module';
import { Histogram } from 'prom-client';
import { Metrics } from '../metrics/metrics';
import { BusTransport, PostgresTransport, RedisTransport } from './invalidation-transports';
import { RedisConnections } from '../redis/redis.module';

/**
 * What an in-memory cache may need to know: a revoked API key (`apiKey`, its id), an issued one (`apiKeyIssued`, its
 * id: the others read it), an organization's changed flags (`flags`, its id), an ended session (`session`, its id), or
 * a user whose memberships or sessions changed (`user`, its id); or an organization event for the console's streams
 * (`event`, the event as JSON: events/organization-events.ts).
 */
export type InvalidationTopic = 'apiKey' | 'apiKeyIssued' | 'flags' | 'session' | 'user' | 'event';

/** `reset`: the sender could not tell what changed (its outbox overflowed); every cache drops everything. */
interface Message {
  origin: string;
  topic: InvalidationTopic | 'reset';
  id: string;
  /** When it was published (ms since the epoch), for the lag metric; messages of older versions have none. */
  sentAt?: number;
}

const RESET = 'reset';
const RETRY_MS = 1_000;
/** Messages kept for sending while the transport is down; past this they collapse into one reset. */
const OUTBOX_LIMIT = 10_000;
/** How long shutdown waits for the outbox to drain (a short-lived CLI must not exit before its revocation). */
const SHUTDOWN_FLUSH_MS = 5_000;

/**
 * Tells every in-memory cache that something it holds is stale: at once in this process, and in every
 * other process on the same database (other instances, the CLI) through Redis pub/sub when REDIS_URL is
 * set, or PostgreSQL LISTEN/NOTIFY otherwise.
 *
 * Faults: announcements wait in an outbox until the transport takes them (retried every second), so an edit
 * made while Redis or PostgreSQL is away is announced once it is back. A receiver that lost its
 * subscription may have missed messages, so each time it subscribes again it drops every cache.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(InvalidationBus.name);
  private readonly local = new EventEmitter();
  private readonly instanceId = randomUUID();
  private readonly transport: BusTransport;
  private outbox: Message[] = [];
  private flushing?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private failing = false;
  /** Time from an announcement on another instance to its receipt here. */
  private readonly lag: Histogram;

  constructor(
    redis: RedisConnections,
    @Inject(DATABASE_URL) databaseUrl: string,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() metrics?: Metrics,
  ) {
    this.lag = new Histogram({
      name: 'flagstore_invalidation_bus_lag_seconds',
      help: 'Time from an invalidation published on another instance to its receipt here',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers: metrics ? [metrics.registry] : [],
    });
    this.local.setMaxListeners(50);
    const receiver = {
      message: (raw: string) => this.receive(raw),
      resubscribed: () => this.reset('its subscription was lost and is back'),
    };
    this.transport =
      redis.commands && redis.subscriber
        ? new RedisTransport(redis.commands, redis.subscriber, receiver, this.logger, config.redisPrefix)
        : new PostgresTransport(databaseUrl, receiver, this.logger);
  }

  async onModuleInit(): Promise<void> {
    await this.transport.start();
  }

  /** Sends what is still waiting, for a bounded time: an announcement should outlive the process that made it. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while (this.outbox.length > 0 && Date.now() < deadline) {
      await this.flush();
      if (this.outbox.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (this.outbox.length > 0) this.logger.warn(`Shutting down with ${this.outbox.length} invalidations unsent`);
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.retryTimer);
    await this.transport.stop();
  }

  publish(topic: InvalidationTopic, id: string): void {
    this.local.emit(topic, id);
    this.enqueue({ origin: this.instanceId, topic, id, sentAt: Date.now() });
  }

  subscribe(topic: InvalidationTopic, handler: (id: string) => void): void {
    this.local.on(topic, handler);
  }

  /** `handler` runs when this instance may have missed messages: drop everything cached. */
  onReset(handler: () => void): void {
    this.local.on(RESET, handler);
  }

  /** Messages not yet handed to the transport. */
  get pending(): number {
    return this.outbox.length;
  }

  private enqueue(message: Message): void {
    if (this.outbox.length >= OUTBOX_LIMIT) {
      this.outbox = [{ origin: this.instanceId, topic: RESET, id: '', sentAt: Date.now() }];
    } else {
      this.outbox.push(message);
    }
    void this.flush();
  }

  /** Hands the outbox to the transport, one batch at a time; on failure the batch waits for the retry. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        while (this.outbox.length > 0) {
          const batch = this.outbox;
          this.outbox = [];
          try {
            await this.transport.send(batch.map((message) => JSON.stringify(message)));
          } catch (error) {
            this.outbox = batch.concat(this.outbox);
            if (!this.failing) this.logger.warn(`Invalidations wait for the bus to come back: ${String(error)}`);
            this.failing = true;
            this.scheduleRetry();
            return;
          }
          if (this.failing) this.logger.log('The bus is back; waiting invalidations were sent');
          this.failing = false;
        }
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.flush();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  private receive(raw: string): void {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch (error) {
      this.logger.warn(`Ignoring a malformed invalidation message: ${String(error)}`);
      return;
    }
    if (message.origin === this.instanceId) return;
    if (typeof message.sentAt === 'number') this.lag.observe(Math.max(0, Date.now() - message.sentAt) / 1000);
    if (message.topic === RESET) this.reset('another instance could not say what changed');
    else this.local.emit(message.topic, message.id);
  }

  private reset(why: string): void {
    this.logger.warn(`Dropping every cached key and payload: ${why}`);
    this.local.emit(RESET);
  }
}

@Global()
@Module({ providers: [InvalidationBus], exports: [InvalidationBus] })
export class InvalidationBusModule {}
