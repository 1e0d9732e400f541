import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { CLOCK, Clock } from '../common/clock';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { Outbox } from '../outbox/outbox';
import { OutboxChannel, OutboxDelivery, PermanentDeliveryError } from '../outbox/outbox-channel';
import { RetryPolicy } from '../outbox/retry-policy';
import { postWebhook, WEBHOOK_ATTEMPT_TIMEOUT_MS, WebhookSendError } from './delivery/webhook-sender';
import { redactUrl } from './delivery/webhook-url';
import { renderWebhook } from './format/webhook-render';
import { webhookHeaders } from './format/webhook-signature';
import { WEBHOOK_CHANNEL, WebhookDeliveryPayload, WebhookEndpointRow, WebhooksRepository } from './webhooks.repository';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Standard Webhooks' schedule (decisions.md, "Webhooks (turn 5)", Delivery): at once, then after 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h and 10 h, each ±10%: 8 attempts over about 28 hours. The window is only a bound; the attempts end it.
 */
export const WEBHOOK_RETRY: RetryPolicy = {
  delaysMs: [5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  maxAttempts: 8,
  windowMs: 40 * HOUR,
  jitter: 0.1,
};

/** The outbox's attempt bound: the HTTP attempt's own 10 s, plus the reads and the attempt's record around it. */
const ATTEMPT_BOUND_MS = WEBHOOK_ATTEMPT_TIMEOUT_MS + 5_000;

/** Why a delivery failed, for the row's last error and the endpoint's reason: never the URL's user info, query or the secret. */
class AnsweredError extends Error {}

/**
 * The outbox's `webhook` channel: one endpoint's delivery of one event. The endpoint is read at each attempt, so a
 * disabled or deleted endpoint's rows are skipped, a changed URL or format is used at once, and during a rotation both
 * secrets sign. Every attempt is recorded (status, response code, duration, the first 1 KB of the answer). A 2xx
 * succeeds; 410 Gone fails at once; anything else is retried on WEBHOOK_RETRY; when the row is given up, the endpoint
 * is disabled with the reason, and what waited behind it is recorded as skipped.
 */
@Injectable()
export class WebhookChannel implements OutboxChannel<WebhookDeliveryPayload> {
  readonly name = WEBHOOK_CHANNEL;
  readonly retry = WEBHOOK_RETRY;
  readonly attemptTimeoutMs = ATTEMPT_BOUND_MS;
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly webhooks: WebhooksRepository,
    private readonly outbox: Outbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    outbox.register(this);
  }

  async send({ id: outboxId, payload, attempt }: OutboxDelivery<WebhookDeliveryPayload>, signal: AbortSignal): Promise<void | 'skipped'> {
    const found = await this.webhooks.delivery(this.sql, payload.endpointId, payload.eventId);
    if (!found || !found.endpoint.enabled) return 'skipped';
    const { endpoint, event, organizationName } = found;
    const body = renderWebhook(endpoint.format, event, { organizationName, consoleUrl: `${this.config.urls.publicUrl}/console` });
    const now = this.clock.now();
    const headers = webhookHeaders(this.secretsOf(endpoint, now), event.id, Math.floor(now / 1000), body);
    const record = { endpointId: endpoint.id, outboxId, eventId: event.id, attempt };
    if (!this.config.webhooks.allowHttp && new URL(endpoint.url).protocol !== 'https:') {
      const error = 'The URL is http and WEBHOOK_ALLOW_HTTP is off: not sent';
      await this.webhooks.insertAttempt(this.sql, {
        ...record,
        status: 'failed',
        responseStatus: null,
        durationMs: 0,
        responseExcerpt: null,
        error,
        at: new Date(now),
      });
      throw new AnsweredError(error);
    }
    let answer;
    try {
      answer = await postWebhook({
        url: endpoint.url,
        headers,
        body,
        timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
        allowPrivate: this.config.webhooks.allowPrivate,
        signal,
      });
    } catch (error) {
      const message = error instanceof WebhookSendError ? error.message : `The attempt failed: ${(error as Error).message}`;
      const durationMs = error instanceof WebhookSendError ? error.durationMs : 0;
      await this.webhooks.insertAttempt(this.sql, {
        ...record,
        status: 'failed',
        responseStatus: null,
        durationMs,
        responseExcerpt: null,
        error: message,
        at: new Date(this.clock.now()),
      });
      throw new AnsweredError(message);
    }
    const succeeded = answer.status >= 200 && answer.status < 300;
    await this.webhooks.insertAttempt(this.sql, {
      ...record,
      status: succeeded ? 'succeeded' : 'failed',
      responseStatus: answer.status,
      durationMs: answer.durationMs,
      responseExcerpt: answer.excerpt,
      error: null,
      at: new Date(this.clock.now()),
    });
    if (succeeded) return;
    if (answer.status === 410) throw new PermanentDeliveryError('The endpoint answered 410 Gone');
    throw new AnsweredError(`The endpoint answered ${answer.status}`);
  }

  /** The row is given up: the endpoint is disabled with the reason, and its queue is recorded as skipped. */
  async givenUp({ payload, attempt }: OutboxDelivery<WebhookDeliveryPayload>, error: string): Promise<void> {
    const reason =
      error === 'The endpoint answered 410 Gone'
        ? 'Disabled: the endpoint answered 410 Gone'
        : `Disabled after ${attempt} failed attempt${attempt === 1 ? '' : 's'} over ${this.retrySpan()}: ${error}`;
    const at = new Date(this.clock.now());
    await this.transactions.run(async (tx) => {
      if (await this.webhooks.disable(tx, payload.endpointId, reason, at)) await this.outbox.skipQueue(tx, WEBHOOK_CHANNEL, payload.endpointId);
    });
    const endpoint = await this.webhooks.forDelivery(this.sql, payload.endpointId);
    this.logger.warn({
      endpointId: payload.endpointId,
      url: endpoint ? redactUrl(endpoint.url) : undefined,
      msg: `webhook endpoint disabled: ${reason}`,
    });
  }

  describeError(error: unknown): string {
    return error instanceof Error ? error.message : 'The attempt failed';
  }

  /** The current secret, and the previous one for 24 hours after a rotation: receivers verify with either. */
  private secretsOf(endpoint: WebhookEndpointRow, now: number): string[] {
    const previous = endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil.getTime() > now;
    return previous ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
  }

  private retrySpan(): string {
    const total = WEBHOOK_RETRY.delaysMs.reduce((sum, delay) => sum + delay, 0);
    return `about ${Math.round(total / HOUR)} hours`;
  }
}
