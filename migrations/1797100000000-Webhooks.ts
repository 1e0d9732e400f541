import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (decisions.md, "Webhooks (turn 5)").
 *
 * - `webhook_endpoints`: an organization's endpoints (at most 20, counted by the service under the organization's
 *   lock). The signing secret is kept as given to the admin once (`whsec_…`): the service must sign with it. During a
 *   rotation the previous one signs too, until `previous_secret_until`.
 * - `webhook_events`: one row per committed write that some endpoint wanted, written in the write's transaction; what
 *   every endpoint's delivery renders. Kept 7 days.
 * - The deliveries are outbox rows (channel `webhook`, payload `{endpointId, eventId}`): the outbox gains an ordering
 *   key and a sequence, so that an endpoint's rows go out one at a time in the order their writes committed. A row
 *   behind another of its key waits at `next_attempt_at = 'infinity'` and is made due when the one before it settles,
 *   so a queue behind a failing endpoint costs the claim nothing. `skipped`: an event that came while its endpoint was
 *   disabled, recorded and never sent.
 * - `webhook_attempts`: every attempt (status, response code, duration, the first 1 KB of the answer), kept 7 days.
 */
export class Webhooks1797100000000 implements MigrationInterface {
  name = 'Webhooks1797100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        url text NOT NULL CONSTRAINT webhook_endpoints_url_length CHECK (char_length(url) BETWEEN 1 AND 2048),
        description text CONSTRAINT webhook_endpoints_description_length CHECK (char_length(description) <= 500),
        events text[] NOT NULL CONSTRAINT webhook_endpoints_events CHECK (cardinality(events) BETWEEN 1 AND 16),
        format text NOT NULL CONSTRAINT webhook_endpoints_format CHECK (format IN ('standard', 'slack', 'discord')),
        flag_keys text[] CONSTRAINT webhook_endpoints_flag_keys CHECK (cardinality(flag_keys) BETWEEN 1 AND 100),
        secret text NOT NULL,
        previous_secret text,
        previous_secret_until timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text CONSTRAINT webhook_endpoints_disabled_reason_length CHECK (char_length(disabled_reason) <= 1000),
        disabled_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT webhook_endpoints_previous_secret_until CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL))
      )`);
    await queryRunner.query(`CREATE INDEX webhook_endpoints_organization ON webhook_endpoints (organization_id)`);

    await queryRunner.query(`
      CREATE TABLE webhook_events (
        id text PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        type text NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX webhook_events_created ON webhook_events (created_at)`);

    await queryRunner.query(`ALTER TABLE outbox ADD COLUMN ordering_key text, ADD COLUMN sequence bigint`);
    await queryRunner.query(`ALTER TABLE outbox DROP CONSTRAINT outbox_state`);
    await queryRunner.query(`ALTER TABLE outbox ADD CONSTRAINT outbox_state CHECK (state IN ('pending', 'succeeded', 'failed', 'skipped'))`);
    await queryRunner.query(`ALTER TABLE outbox ADD CONSTRAINT outbox_ordered_has_sequence CHECK ((ordering_key IS NULL) = (sequence IS NULL))`);
    await queryRunner.query(`CREATE UNIQUE INDEX outbox_ordering ON outbox (channel, ordering_key, sequence) WHERE ordering_key IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX outbox_settled ON outbox (created_at) WHERE state <> 'pending'`);

    await queryRunner.query(`
      CREATE TABLE webhook_attempts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        outbox_id uuid NOT NULL,
        event_id text NOT NULL,
        attempt integer NOT NULL CONSTRAINT webhook_attempts_attempt CHECK (attempt >= 1),
        status text NOT NULL CONSTRAINT webhook_attempts_status CHECK (status IN ('succeeded', 'failed')),
        response_status integer,
        duration_ms integer NOT NULL,
        response_excerpt text CONSTRAINT webhook_attempts_excerpt_length CHECK (octet_length(response_excerpt) <= 4096),
        error text CONSTRAINT webhook_attempts_error_length CHECK (char_length(error) <= 1000),
        at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, at DESC)`);
    await queryRunner.query(`CREATE INDEX webhook_attempts_at ON webhook_attempts (at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_attempts`);
    await queryRunner.query(`DELETE FROM outbox WHERE ordering_key IS NOT NULL OR state = 'skipped'`);
    await queryRunner.query(`DROP INDEX outbox_settled`);
    await queryRunner.query(`DROP INDEX outbox_ordering`);
    await queryRunner.query(`ALTER TABLE outbox DROP CONSTRAINT outbox_ordered_has_sequence`);
    await queryRunner.query(`ALTER TABLE outbox DROP CONSTRAINT outbox_state`);
    await queryRunner.query(`ALTER TABLE outbox ADD CONSTRAINT outbox_state CHECK (state IN ('pending', 'succeeded', 'failed'))`);
    await queryRunner.query(`ALTER TABLE outbox DROP COLUMN sequence, DROP COLUMN ordering_key`);
    await queryRunner.query(`DROP TABLE webhook_events`);
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
