import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';
import { WebhookEvent, WebhookEventType, WebhookFormat } from './webhook-event';

/** The outbox channel of webhook deliveries: one row per (endpoint, event), queued by endpoint. */
export const WEBHOOK_CHANNEL = 'webhook';

/** What an outbox row of the `webhook` channel holds. */
export interface WebhookDeliveryPayload {
  endpointId: string;
  eventId: string;
}

export interface WebhookEndpointRow {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  format: WebhookFormat;
  flagKeys: string[] | null;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An endpoint's most recent settled attempt, for the list. */
export interface LastAttempt {
  endpointId: string;
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  at: Date;
}

/** One line of an endpoint's deliveries: an attempt made, or a delivery still waiting (pending) or never sent (skipped). */
export interface DeliveryLine {
  eventId: string;
  type: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  responseStatus: number | null;
  durationMs: number | null;
  responseExcerpt: string | null;
  error: string | null;
  at: Date;
}

export interface NewAttempt {
  endpointId: string;
  outboxId: string;
  eventId: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  error: string | null;
  at: Date;
}

const ENDPOINT_COLUMNS = `id, organization_id AS "organizationId", url, description, events, format, flag_keys AS "flagKeys", secret,
  previous_secret AS "previousSecret", previous_secret_until AS "previousSecretUntil", enabled, disabled_reason AS "disabledReason",
  disabled_at AS "disabledAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * Webhook endpoints, their events and their attempts (migrations/1797100000000-Webhooks.ts). Every read of an
 * organization's endpoint takes the organization's id; only the delivery worker reads an endpoint by its id alone, from
 * an outbox row the service wrote itself.
 */
@Injectable()
export class WebhooksRepository {
  /** The organization's endpoints that subscribe to `type`, enabled or not, by id (the order their queues are locked in). */
  subscribers(
    tx: Transaction,
    organizationId: string,
    type: WebhookEventType,
  ): Promise<{ id: string; enabled: boolean; flagKeys: string[] | null }[]> {
    return tx.rows(`SELECT id, enabled, flag_keys AS "flagKeys" FROM webhook_endpoints WHERE organization_id = $1 AND $2 = ANY(events) ORDER BY id`, [
      organizationId,
      type,
    ]);
  }

  async insertEvent(tx: Transaction, event: WebhookEvent): Promise<void> {
    await tx.rows(`INSERT INTO webhook_events (id, organization_id, type, data, created_at) VALUES ($1, $2, $3, $4::jsonb, $5)`, [
      event.id,
      event.organizationId,
      event.type,
      JSON.stringify(event.data),
      event.createdAt,
    ]);
  }

  list(db: Db, organizationId: string): Promise<WebhookEndpointRow[]> {
    return db.rows(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId]);
  }

  find(db: Db, organizationId: string, id: string, lock = false): Promise<WebhookEndpointRow | null> {
    return db.row(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [
      organizationId,
      id,
    ]);
  }

  /** The endpoint an outbox row was written for (the delivery worker's read). */
  forDelivery(db: Db, id: string): Promise<WebhookEndpointRow | null> {
    return db.row(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  /**
   * What one delivery needs, in one read: the endpoint, the event and its organization's name. Null when either is
   * gone (the endpoint deleted, the event past its 7 days).
   */
  async delivery(
    db: Db,
    endpointId: string,
    eventId: string,
  ): Promise<{ endpoint: WebhookEndpointRow; event: WebhookEvent; organizationName: string } | null> {
    const row = await db.row<{ endpoint: Record<string, unknown>; event: Record<string, unknown>; organizationName: string }>(
      `SELECT to_jsonb(w) AS endpoint, to_jsonb(e) AS event, o.name AS "organizationName"
       FROM (SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1) w
       JOIN (SELECT id, type, organization_id AS "organizationId", data, created_at AS "createdAt" FROM webhook_events WHERE id = $2) e ON true
       JOIN organizations o ON o.id = e."organizationId"`,
      [endpointId, eventId],
    );
    if (!row) return null;
    const endpoint = row.endpoint as unknown as WebhookEndpointRow;
    const event = row.event as unknown as WebhookEvent;
    return {
      endpoint: {
        ...endpoint,
        previousSecretUntil: endpoint.previousSecretUntil === null ? null : new Date(endpoint.previousSecretUntil),
        disabledAt: endpoint.disabledAt === null ? null : new Date(endpoint.disabledAt),
        createdAt: new Date(endpoint.createdAt),
        updatedAt: new Date(endpoint.updatedAt),
      },
      event: { ...event, createdAt: new Date(event.createdAt) },
      organizationName: row.organizationName,
    };
  }

  async count(tx: Transaction, organizationId: string): Promise<number> {
    const row = await tx.row<{ count: number }>(`SELECT count(*)::int AS count FROM webhook_endpoints WHERE organization_id = $1`, [organizationId]);
    return row!.count;
  }

  insert(
    tx: Transaction,
    organizationId: string,
    fields: { url: string; description: string | null; events: string[]; format: WebhookFormat; flagKeys: string[] | null; secret: string },
    at: Date,
  ): Promise<WebhookEndpointRow | null> {
    return tx.row(
      `INSERT INTO webhook_endpoints (organization_id, url, description, events, format, flag_keys, secret, created_at, updated_at)
       VALUES ($1, $2, $3, $4::text[], $5, $6::text[], $7, $8, $8)
       RETURNING ${ENDPOINT_COLUMNS}`,
      [organizationId, fields.url, fields.description, fields.events, fields.format, fields.flagKeys, fields.secret, at],
    );
  }

  /** Writes the given columns (the whole row as the service settled it). */
  update(tx: Transaction, row: WebhookEndpointRow, at: Date): Promise<WebhookEndpointRow | null> {
    return tx.row(
      `UPDATE webhook_endpoints SET url = $3, description = $4, events = $5::text[], format = $6, flag_keys = $7::text[], secret = $8,
         previous_secret = $9, previous_secret_until = $10, enabled = $11, disabled_reason = $12, disabled_at = $13, updated_at = $14
       WHERE organization_id = $1 AND id = $2
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        row.organizationId,
        row.id,
        row.url,
        row.description,
        row.events,
        row.format,
        row.flagKeys,
        row.secret,
        row.previousSecret,
        row.previousSecretUntil,
        row.enabled,
        row.disabledReason,
        row.disabledAt,
        at,
      ],
    );
  }

  /** Disabled by the delivery worker (a 410, or the last retry failed), unless an admin disabled it already. */
  async disable(tx: Transaction, id: string, reason: string, at: Date): Promise<boolean> {
    const rows = await tx.rows(
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = $3, updated_at = $3 WHERE id = $1 AND enabled RETURNING id`,
      [id, reason.slice(0, 1000), at],
    );
    return rows.length > 0;
  }

  async delete(tx: Transaction, organizationId: string, id: string): Promise<void> {
    await tx.rows(`DELETE FROM webhook_endpoints WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
  }

  async insertAttempt(db: Db, attempt: NewAttempt): Promise<void> {
    await db.rows(
      `INSERT INTO webhook_attempts (endpoint_id, outbox_id, event_id, attempt, status, response_status, duration_ms, response_excerpt, error, at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1)`,
      [
        attempt.endpointId,
        attempt.outboxId,
        attempt.eventId,
        attempt.attempt,
        attempt.status,
        attempt.responseStatus,
        attempt.durationMs,
        attempt.responseExcerpt,
        attempt.error?.slice(0, 1000) ?? null,
        attempt.at,
      ],
    );
  }

  /** Each endpoint's latest attempt. */
  lastAttempts(db: Db, endpointIds: string[]): Promise<LastAttempt[]> {
    if (endpointIds.length === 0) return Promise.resolve([]);
    return db.rows(
      `SELECT DISTINCT ON (endpoint_id) endpoint_id AS "endpointId", status, response_status AS "responseStatus", at
       FROM webhook_attempts WHERE endpoint_id = ANY($1::uuid[]) ORDER BY endpoint_id, at DESC`,
      [endpointIds],
    );
  }

  /**
   * An endpoint's deliveries since `since`, newest first: every attempt made, and each delivery that waits for its
   * next attempt (pending, at the time it is due, or when it was written while it queues behind another) or was
   * never sent (skipped).
   */
  async deliveries(
    db: Db,
    endpointId: string,
    since: Date,
    window: { offset: number; limit: number },
  ): Promise<{ rows: DeliveryLine[]; total: number }> {
    const lines = `
      SELECT a.event_id AS "eventId", e.type, a.attempt, a.status, a.response_status AS "responseStatus", a.duration_ms AS "durationMs",
             a.response_excerpt AS "responseExcerpt", a.error, a.at
      FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
      WHERE a.endpoint_id = $1 AND a.at >= $2
      UNION ALL
      SELECT o.payload->>'eventId', e.type, CASE WHEN o.state = 'pending' THEN o.attempts + 1 ELSE 0 END, o.state, NULL, NULL, NULL, o.last_error,
             CASE WHEN o.state = 'pending' AND o.next_attempt_at < 'infinity' THEN o.next_attempt_at ELSE o.created_at END
      FROM outbox o JOIN webhook_events e ON e.id = o.payload->>'eventId'
      WHERE o.channel = '${WEBHOOK_CHANNEL}' AND o.ordering_key = $1::text AND o.state IN ('pending', 'skipped') AND o.created_at >= $2`;
    const [rows, count] = await Promise.all([
      db.rows<DeliveryLine>(`SELECT * FROM (${lines}) line ORDER BY at DESC, attempt DESC LIMIT $3 OFFSET $4`, [
        endpointId,
        since,
        window.limit,
        window.offset,
      ]),
      db.row<{ total: number }>(`SELECT count(*)::int AS total FROM (${lines}) line`, [endpointId, since]),
    ]);
    return { rows, total: count!.total };
  }

  /** Whether the endpoint had a delivery of the event (sent, waiting or skipped) since `since`. */
  async hadDelivery(db: Db, endpointId: string, eventId: string, since: Date): Promise<boolean> {
    const row = await db.row(
      `SELECT 1 FROM outbox WHERE channel = '${WEBHOOK_CHANNEL}' AND ordering_key = $1::text AND payload->>'eventId' = $2 AND created_at >= $3 LIMIT 1`,
      [endpointId, eventId, since],
    );
    return row !== null;
  }

  /** Forgets what is older than `before` (7 days): events, attempts and settled deliveries, at most `limit` of each. */
  async purgeBefore(db: Db, before: Date, limit: number): Promise<number> {
    const counts = await Promise.all([
      db.rows(`DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE at < $1 LIMIT $2) RETURNING 1`, [before, limit]),
      db.rows(
        `DELETE FROM outbox WHERE id IN (
           SELECT id FROM outbox WHERE channel = '${WEBHOOK_CHANNEL}' AND state <> 'pending' AND created_at < $1 LIMIT $2) RETURNING 1`,
        [before, limit],
      ),
      db.rows(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e WHERE e.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.channel = '${WEBHOOK_CHANNEL}' AND o.state = 'pending' AND o.payload->>'eventId' = e.id)
           LIMIT $2) RETURNING 1`,
        [before, limit],
      ),
    ]);
    return counts.reduce((sum, rows) => sum + rows.length, 0);
  }
}
