import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { Client } from 'pg';

export const CHANNEL = 'flagstore_invalidation';
const RECONNECT_MS = 1_000;
/** A boot with the bus away still starts; it subscribes once the bus answers. */
const FIRST_SUBSCRIBE_WAIT_MS = 5_000;
const PG_TIMEOUT_MS = 5_000;

export interface BusReceiver {
  message(raw: string): void;
  /** The subscription was lost and is active again: messages sent in between were missed. */
  resubscribed(): void;
}

/** Carries raw messages between instances; the bus above it owns ordering, retries and resets. */
export interface BusTransport {
  /** Subscribes; resolves once messages are being received (or after a bounded wait when the bus is away). */
  start(): Promise<void>;
  /** Sends every message, or rejects (nothing is known to be sent) so the bus retries the whole batch. */
  send(messages: string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Redis pub/sub. The subscriber connection subscribes on every `ready` (its first connection and each
 * reconnection) rather than relying on ioredis's automatic resubscription, which races the connection's ready
 * check and can leave an instance deaf; a subscription made again reports `resubscribed`.
 */
export class RedisTransport implements BusTransport {
  private subscriptions = 0;
  private firstSubscription?: () => void;

  /** The channel: CHANNEL, or `<prefix>:CHANNEL` for a deployment named on a shared Redis (REDIS_PREFIX). */
  private readonly channel: string;

  constructor(
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    private readonly receiver: BusReceiver,
    private readonly logger: Logger,
    prefix?: string,
  ) {
    this.channel = prefix ? `${prefix}:${CHANNEL}` : CHANNEL;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (_channel: string, raw: string) => this.receiver.message(raw));
    this.subscriber.on('ready', () => void this.subscribe());
    const subscribed = new Promise<void>((resolve) => (this.firstSubscription = resolve));
    if (this.subscriber.status === 'wait') {
      this.subscriber.connect().catch((error: unknown) => this.logger.warn(`Redis subscriber: ${String(error)}`));
    } else if (this.subscriber.status === 'ready') {
      void this.subscribe();
    }
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_SUBSCRIBE_WAIT_MS)));
    await Promise.race([subscribed, waited]);
    clearTimeout(timer);
    if (this.subscriptions === 0) this.logger.warn('Redis is not answering; invalidations will be heard once it is');
  }

  async send(messages: string[]): Promise<void> {
    const pipeline = this.commands.pipeline();
    for (const message of messages) pipeline.publish(this.channel, message);
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('Redis did not run the publications');
  }

  async stop(): Promise<void> {
    // RedisConnections closes the connections.
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
    } catch (error) {
      // The connection dropped again; its next `ready` subscribes.
      this.logger.warn(`Redis subscribe failed: ${String(error)}`);
      return;
    }
    this.subscriptions += 1;
    if (this.subscriptions === 1) this.firstSubscription?.();
    else this.receiver.resubscribed();
  }
}

/**
 * PostgreSQL LISTEN/NOTIFY on two connections of its own: one listening, which reconnects and listens again
 * after any failure (then reports `resubscribed`), and one sending, replaced after any failure.
 */
export class PostgresTransport implements BusTransport {
  private listener?: Client;
  private publisher?: Promise<Client>;
  private stopped = false;
  private listening = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly receiver: BusReceiver,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.listen();
  }

  async send(messages: string[]): Promise<void> {
    this.publisher ??= this.connect();
    const publisher = this.publisher;
    try {
      await (await publisher).query('SELECT pg_notify($1, message) FROM unnest($2::text[]) AS message', [CHANNEL, messages]);
    } catch (error) {
      if (this.publisher === publisher) this.publisher = undefined;
      void publisher.then((client) => client.end()).catch(() => undefined);
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const publisher = this.publisher;
    this.publisher = undefined;
    await Promise.all([this.listener?.end().catch(() => undefined), publisher?.then((client) => client.end()).catch(() => undefined)]);
  }

  private async connect(): Promise<Client> {
    const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: PG_TIMEOUT_MS, query_timeout: PG_TIMEOUT_MS });
    // An idle connection that dies reports here; the next send finds the query failing and replaces it.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private async listen(): Promise<void> {
    const client = await this.connect();
    let lost = false;
    const onLost = (why: string) => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn(`Invalidation listener lost its connection (${why}); reconnecting`);
      this.retryListen();
    };
    client.on('notification', (notification) => notification.payload && this.receiver.message(notification.payload));
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('connection ended'));
    try {
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.listening += 1;
    if (this.listening > 1) this.receiver.resubscribed();
  }

  private retryListen(): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.listen().catch(() => this.retryListen());
    }, RECONNECT_MS).unref();
  }
}
