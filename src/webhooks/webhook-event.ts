import { ActorType } from '../audit/audit-entry';

/** What an endpoint may subscribe to (decisions.md, "Webhooks (turn 5)", Endpoints). */
export const WEBHOOK_EVENT_TYPES = [
  'flag.changed',
  'change-request.opened',
  'change-request.approved',
  'change-request.declined',
  'change-request.applied',
  'change-request.failed',
  'review-setting.changed',
  'storage.changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** `POST …/webhooks/{id}/test`'s event: sent to that endpoint only, whatever it subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
export type AnyWebhookEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

/** How an endpoint's deliveries are written: Standard Webhooks JSON, or a chat's own message shape. */
export const WEBHOOK_FORMATS = ['standard', 'slack', 'discord'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** Who made the change, the name joined in when the event was written (a person's name, a key's name). */
export interface WebhookActor {
  type: ActorType;
  id: string | null;
  name: string | null;
}

/** One flag's change in a `flag.changed` event: its audit entry. */
export interface WebhookFlagChange {
  /** Null for a deletion. */
  flagId: string | null;
  key: string;
  /** The audit entry's label (`flag.create`, `flag.value.set`, `flag.delete`, ...); why, in `context`. */
  action: string;
  before: unknown;
  after: unknown;
  context: Record<string, unknown> | null;
}

export interface FlagChangedData {
  organizationId: string;
  changes: WebhookFlagChange[];
  actor: WebhookActor;
}

export interface ChangeRequestEventData {
  id: string;
  title: string;
  /** The request's state after the event: open, approved, declined, applied, failed. */
  state: string;
  author: { id: string | null; name: string | null };
  flagKeys: string[];
  /** The request in the console. */
  url: string;
  /** Who did what the event reports (the reviewer of an approval or a decline; who applied it). */
  actor: WebhookActor;
  /** A review's comment; on `applied`, the reason of an admin's override; on `failed`, why; absent otherwise. */
  comment?: string;
}

/** The review setting's history entry, as GET /v1/organization/review/history shows it. */
export interface ReviewSettingChangedData {
  id: string;
  organizationId: string;
  /** The admin who changed it. */
  user: { id: string; name: string } | null;
  at: string;
  before: { required: boolean; approvals: number; selfApproval: boolean };
  after: { required: boolean; approvals: number; selfApproval: boolean };
}

/** As the console's `storage` event of /v1/events. */
export interface StorageChangedData {
  ids: string[];
  change: 'uploaded' | 'deleted' | 'purged';
}

export interface WebhookTestData {
  organizationId: string;
  endpointId: string;
  message: string;
}

export interface WebhookEventDataMap {
  'flag.changed': FlagChangedData;
  'change-request.opened': ChangeRequestEventData;
  'change-request.approved': ChangeRequestEventData;
  'change-request.declined': ChangeRequestEventData;
  'change-request.applied': ChangeRequestEventData;
  'change-request.failed': ChangeRequestEventData;
  'review-setting.changed': ReviewSettingChangedData;
  'storage.changed': StorageChangedData;
  'webhook.test': WebhookTestData;
}

/** An event as stored once (whatever number of endpoints it goes to) and rendered for each. */
export interface WebhookEvent<T extends AnyWebhookEventType = AnyWebhookEventType> {
  /** `msg_…`: the `webhook-id` header, the same on every attempt and redelivery. */
  id: string;
  type: T;
  organizationId: string;
  data: WebhookEventDataMap[T];
  createdAt: Date;
}

/** What a rendering needs beside the event. */
export interface WebhookRenderContext {
  organizationName: string;
  /** `$PUBLIC_URL/console`, without a trailing slash; a flag is at `${consoleUrl}/flags/${flagId}?org=${organizationId}`. */
  consoleUrl: string;
}
