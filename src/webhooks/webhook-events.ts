import { randomBytes } from 'node:crypto';
import { actorName } from '../audit/actor-name';
import { Inject, Injectable } from '@nestjs/common';
import { AuditActor } from '../audit/audit-entry';
import { CLOCK, Clock } from '../common/clock';
import { Transaction } from '../database/sql';
import { FlagChange } from '../flags/flag.model';
import { Outbox } from '../outbox/outbox';
import {
  ChangeRequestEventData,
  ReviewSettingChangedData,
  StorageChangedData,
  WebhookEvent,
  WebhookEventDataMap,
  WebhookEventType,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_TEST_EVENT,
} from './webhook-event';
import { WEBHOOK_CHANNEL, WebhookDeliveryPayload, WebhooksRepository } from './webhooks.repository';

/** `msg_` and 128 random bits: the event's `webhook-id`, the same on every attempt. */
export function newWebhookEventId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** Events about flags, which an endpoint's `flagKeys` filter; the others go to every endpoint that subscribes to them. */
const ABOUT_FLAGS = new Set<WebhookEventType>(WEBHOOK_EVENT_TYPES.filter((type) => type === 'flag.changed' || type.startsWith('change-request.')));

/**
 * Writes webhook events (decisions.md, "Webhooks (turn 5)", Events and Delivery) in the transaction of the change
 * they report: one event per committed write, stored once, and one outbox row per endpoint that wants it, at the end of
 * that endpoint's queue (a disabled endpoint's row is recorded `skipped`). A rolled-back write leaves neither. An
 * organization whose endpoints want none of it pays one indexed read.
 */
@Injectable()
export class WebhookEvents {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly outbox: Outbox,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** A flag write's event: its audit entries, the actor's name joined in. */
  async flagChanged(tx: Transaction, actor: AuditActor, changes: readonly FlagChange[]): Promise<string | null> {
    if (changes.length === 0) return null;
    const organizationId = changes[0].organizationId;
    return this.record(tx, organizationId, 'flag.changed', [...new Set(changes.map((change) => change.flagKey))], async () => ({
      organizationId,
      changes: changes.map((change) => ({
        flagId: change.flagId ?? change.deletedFlagId ?? null,
        key: change.flagKey,
        action: change.action,
        before: change.before,
        after: change.after,
        context: (change.context as Record<string, unknown> | undefined) ?? null,
      })),
      actor: { type: actor.actorType, id: actor.actorId, name: await actorName(tx, organizationId, actor.actorType, actor.actorId) },
    }));
  }

  changeRequest(
    tx: Transaction,
    organizationId: string,
    type: Extract<WebhookEventType, `change-request.${string}`>,
    data: ChangeRequestEventData,
  ): Promise<string | null> {
    return this.record(tx, organizationId, type, data.flagKeys, async () => data);
  }

  reviewSettingChanged(tx: Transaction, organizationId: string, entry: ReviewSettingChangedData): Promise<string | null> {
    return this.record(tx, organizationId, 'review-setting.changed', undefined, async () => entry);
  }

  storageChanged(tx: Transaction, organizationId: string, data: StorageChangedData): Promise<string | null> {
    if (data.ids.length === 0) return Promise.resolve(null);
    return this.record(tx, organizationId, 'storage.changed', undefined, async () => data);
  }

  /** `POST …/{id}/test`: an event for that endpoint alone, whatever it subscribes to. */
  async test(tx: Transaction, organizationId: string, endpointId: string): Promise<string> {
    const event: WebhookEvent<typeof WEBHOOK_TEST_EVENT> = {
      id: newWebhookEventId(),
      type: WEBHOOK_TEST_EVENT,
      organizationId,
      data: { organizationId, endpointId, message: 'A test event from Flagstore: this endpoint receives and verifies deliveries.' },
      createdAt: this.now(),
    };
    await this.webhooks.insertEvent(tx, event);
    await this.enqueue(tx, endpointId, event.id, false);
    return event.id;
  }

  /** An event of the last 7 days sent to the endpoint again, at the end of its queue. */
  async redeliver(tx: Transaction, endpointId: string, eventId: string): Promise<void> {
    await this.enqueue(tx, endpointId, eventId, false);
  }

  private async record<T extends WebhookEventType>(
    tx: Transaction,
    organizationId: string,
    type: T,
    flagKeys: readonly string[] | undefined,
    data: () => Promise<WebhookEventDataMap[T]>,
  ): Promise<string | null> {
    const endpoints = (await this.webhooks.subscribers(tx, organizationId, type)).filter(
      (endpoint) => endpoint.flagKeys === null || !ABOUT_FLAGS.has(type) || endpoint.flagKeys.some((key) => flagKeys?.includes(key)),
    );
    if (endpoints.length === 0) return null;
    const event: WebhookEvent<T> = { id: newWebhookEventId(), type, organizationId, data: await data(), createdAt: this.now() };
    await this.webhooks.insertEvent(tx, event);
    for (const endpoint of endpoints) await this.enqueue(tx, endpoint.id, event.id, !endpoint.enabled);
    return event.id;
  }

  private enqueue(tx: Transaction, endpointId: string, eventId: string, skipped: boolean): Promise<string> {
    const payload: WebhookDeliveryPayload = { endpointId, eventId };
    return this.outbox.enqueue(tx, WEBHOOK_CHANNEL, payload, { key: endpointId, skipped });
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}
