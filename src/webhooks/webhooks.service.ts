import { Inject, Injectable } from '@nestjs/common';
import { actorName } from '../audit/actor-name';
import { SessionPrincipal } from '../auth/principal';
import { CLOCK, Clock } from '../common/clock';
import { pageWindow, totalPages } from '../common/dto/pagination';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { Outbox } from '../outbox/outbox';
import { checkWebhookUrl } from './delivery/webhook-url';
import {
  CreatedWebhookEndpointDto,
  CreateWebhookDto,
  RotatedWebhookSecretDto,
  UpdateWebhookDto,
  WebhookDeliveryPageDto,
  WebhookDeliveryQueryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEventQueuedDto,
} from './dto/webhook.dto';
import { newWebhookSecret } from './format/webhook-signature';
import { WebhookEvents } from './webhook-events';
import { WebhooksErrors } from './webhooks.errors';
import { LastAttempt, WEBHOOK_CHANNEL, WebhookEndpointRow, WebhooksRepository } from './webhooks.repository';

/** decisions.md, "Webhooks (turn 5)", Endpoints. */
export const MAX_WEBHOOK_ENDPOINTS = 20;
/** How long deliveries are listed and events can be sent again. */
export const WEBHOOK_RETENTION_MS = 7 * 24 * 3_600_000;
/** What a `webhook-id` looks like (WebhookEvents' `msg_` and 128 bits in base64url). */
const EVENT_ID = /^msg_[A-Za-z0-9_-]{22}$/;
/** How long the previous secret still signs after a rotation. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * An organization's webhook endpoints (its admins, with a session): made, changed, disabled and deleted under the
 * organization's lock (the limit of 20 holds against a burst), their deliveries listed and sent again. Disabling one
 * records what waited in its queue as skipped, in the same transaction.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly webhooks: WebhooksRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly events: WebhookEvents,
    private readonly outbox: Outbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async list(organizationId: string): Promise<WebhookEndpointListDto> {
    const rows = await this.webhooks.list(this.sql, organizationId);
    const last = new Map(
      (
        await this.webhooks.lastAttempts(
          this.sql,
          rows.map((row) => row.id),
        )
      ).map((attempt) => [attempt.endpointId, attempt]),
    );
    return { results: rows.map((row) => this.dto(row, last.get(row.id))) };
  }

  async get(organizationId: string, id: string): Promise<WebhookEndpointDto> {
    const row = await this.webhooks.find(this.sql, organizationId, id);
    if (!row) throw WebhooksErrors.notFound(id);
    const [last] = await this.webhooks.lastAttempts(this.sql, [id]);
    return this.dto(row, last);
  }

  async create(principal: SessionPrincipal, dto: CreateWebhookDto): Promise<CreatedWebhookEndpointDto> {
    await this.checkUrl(dto.url);
    const secret = newWebhookSecret();
    const row = await this.transactions.run(async (tx) => {
      await this.lock(tx, principal.organizationId);
      if ((await this.webhooks.count(tx, principal.organizationId)) >= MAX_WEBHOOK_ENDPOINTS) throw WebhooksErrors.limit(MAX_WEBHOOK_ENDPOINTS);
      const fields = {
        url: dto.url,
        description: dto.description ?? null,
        events: dto.events,
        format: dto.format,
        flagKeys: dto.flagKeys ?? null,
        secret,
      };
      return (await this.webhooks.insert(tx, principal.organizationId, fields, this.now()))!;
    });
    return { ...this.dto(row, undefined), secret };
  }

  async update(principal: SessionPrincipal, id: string, dto: UpdateWebhookDto): Promise<WebhookEndpointDto> {
    if (dto.url !== undefined) await this.checkUrl(dto.url);
    await this.transactions.run(async (tx) => {
      const row = await this.locked(tx, principal.organizationId, id);
      const next: WebhookEndpointRow = {
        ...row,
        url: dto.url ?? row.url,
        events: dto.events ?? row.events,
        format: dto.format ?? row.format,
        flagKeys: dto.flagKeys === undefined ? row.flagKeys : dto.flagKeys,
        description: dto.description === undefined ? row.description : dto.description,
      };
      const at = this.now();
      if (dto.enabled === false && row.enabled) {
        next.enabled = false;
        next.disabledReason = `Disabled by ${(await actorName(tx, principal.organizationId, 'session', principal.id)) ?? 'an admin'}`;
        next.disabledAt = at;
        await this.outbox.skipQueue(tx, WEBHOOK_CHANNEL, id);
      } else if (dto.enabled === true && !row.enabled) {
        next.enabled = true;
        next.disabledReason = null;
        next.disabledAt = null;
      }
      await this.webhooks.update(tx, next, at);
    });
    return this.get(principal.organizationId, id);
  }

  async delete(principal: SessionPrincipal, id: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      await this.locked(tx, principal.organizationId, id);
      await this.outbox.deleteQueue(tx, WEBHOOK_CHANNEL, id);
      await this.webhooks.delete(tx, principal.organizationId, id);
    });
  }

  /** A new secret; the previous one keeps signing for 24 hours, so receivers can move over without losing a delivery. */
  async rotateSecret(principal: SessionPrincipal, id: string): Promise<RotatedWebhookSecretDto> {
    const secret = newWebhookSecret();
    const at = this.now();
    const until = new Date(at.getTime() + SECRET_OVERLAP_MS);
    await this.transactions.run(async (tx) => {
      const row = await this.locked(tx, principal.organizationId, id);
      await this.webhooks.update(tx, { ...row, secret, previousSecret: row.secret, previousSecretUntil: until }, at);
    });
    return { secret, previousSecretExpiresAt: until.toISOString() };
  }

  /** A `webhook.test` event for this endpoint alone, at the end of its queue. */
  async test(principal: SessionPrincipal, id: string): Promise<WebhookEventQueuedDto> {
    const eventId = await this.transactions.run(async (tx) => {
      const row = await this.locked(tx, principal.organizationId, id);
      if (!row.enabled) throw WebhooksErrors.disabled('send it a test event');
      return this.events.test(tx, principal.organizationId, id);
    });
    return { eventId };
  }

  async deliveries(organizationId: string, id: string, query: WebhookDeliveryQueryDto): Promise<WebhookDeliveryPageDto> {
    if (!(await this.webhooks.find(this.sql, organizationId, id))) throw WebhooksErrors.notFound(id);
    const { rows, total } = await this.webhooks.deliveries(this.sql, id, this.retentionStart(), pageWindow(query));
    return {
      results: rows.map((line) => ({ ...line, at: line.at.toISOString() })),
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }

  /** Sends an event of the last 7 days to the endpoint again (the same `webhook-id`), after what already waits for it. */
  async redeliver(principal: SessionPrincipal, id: string, eventId: string): Promise<WebhookEventQueuedDto> {
    if (!EVENT_ID.test(eventId)) throw WebhooksErrors.invalid('eventId must be a webhook event id (msg_ and 22 characters)');
    await this.transactions.run(async (tx) => {
      const row = await this.locked(tx, principal.organizationId, id);
      if (!(await this.webhooks.hadDelivery(tx, id, eventId, this.retentionStart()))) throw WebhooksErrors.deliveryNotFound(eventId);
      if (!row.enabled) throw WebhooksErrors.disabled('send it events again');
      await this.events.redeliver(tx, id, eventId);
    });
    return { eventId };
  }

  private async checkUrl(url: string): Promise<void> {
    const refusal = await checkWebhookUrl(url, this.config.webhooks);
    if (refusal !== null) throw WebhooksErrors.invalid(refusal);
  }

  private async lock(tx: Transaction, organizationId: string): Promise<void> {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationDeleted();
  }

  /** The endpoint row-locked, after its organization's row (the lock order of every write of the organization). */
  private async locked(tx: Transaction, organizationId: string, id: string): Promise<WebhookEndpointRow> {
    await this.lock(tx, organizationId);
    const row = await this.webhooks.find(tx, organizationId, id, true);
    if (!row) throw WebhooksErrors.notFound(id);
    return row;
  }

  private dto(row: WebhookEndpointRow, last: LastAttempt | undefined): WebhookEndpointDto {
    const now = this.clock.now();
    const overlap = row.previousSecretUntil !== null && row.previousSecretUntil.getTime() > now ? row.previousSecretUntil.toISOString() : null;
    return {
      id: row.id,
      url: row.url,
      description: row.description,
      events: row.events,
      format: row.format,
      flagKeys: row.flagKeys,
      enabled: row.enabled,
      disabledReason: row.disabledReason,
      disabledAt: row.disabledAt?.toISOString() ?? null,
      previousSecretExpiresAt: overlap,
      lastDelivery: last ? { status: last.status, responseStatus: last.responseStatus, at: last.at.toISOString() } : null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  private retentionStart(): Date {
    return new Date(this.clock.now() - WEBHOOK_RETENTION_MS);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}
