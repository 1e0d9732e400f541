import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change requests (decisions.md, "Change requests (turn 5)"): proposed end states of flags that wait for reviews.
 * - change_requests: one per request, in its organization (and gone with it). `revision` counts its edits: reviews
 *   belong to the revision they were given on, so an edit clears the approvals without deleting any review.
 *   The author (a user or an API key) and their name are kept as they were, so a request outlives its author.
 *   A request made of an import (`requestReview: true`) keeps the import's dry-run report.
 * - change_request_changes: per flag key, the proposed state (`after`, null for a delete), the flag's state and row
 *   version when the request was made (`before` and `flag_version`, null for a create), and the flag's id (no
 *   foreign key: a request outlives a deleted flag and says so at apply time).
 * - change_request_reviews: once per person per revision, held by the schema (two racing reviews: one wins).
 * - change_request_events: the request's timeline, append-only (opened, edited, approved, declined, applied,
 *   withdrawn, failed), who and when.
 */
export class ChangeRequests1796900000000 implements MigrationInterface {
  name = 'ChangeRequests1796900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE change_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
        description text CHECK (char_length(description) <= 2000),
        state varchar(16) NOT NULL DEFAULT 'open'
          CHECK (state IN ('open', 'approved', 'applied', 'declined', 'withdrawn', 'failed')),
        revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
        author_type varchar(16) NOT NULL CHECK (author_type IN ('session', 'apiKey')),
        author_id uuid NOT NULL,
        author_name text NOT NULL,
        apply_at timestamptz,
        override_reason text CHECK (char_length(override_reason) BETWEEN 1 AND 500),
        failure_reason text,
        import_report jsonb CHECK (import_report IS NULL OR jsonb_typeof(import_report) = 'object'),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        applied_at timestamptz,
        CHECK ((state = 'applied') = (applied_at IS NOT NULL)),
        CHECK (override_reason IS NULL OR state = 'applied'),
        CHECK ((state = 'failed') = (failure_reason IS NOT NULL))
      )`);
    await queryRunner.query(`CREATE INDEX change_requests_list_idx ON change_requests (organization_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX change_requests_state_idx ON change_requests (organization_id, state, created_at DESC, id DESC)`);
    await queryRunner.query(
      `CREATE INDEX change_requests_due_idx ON change_requests (apply_at, id) WHERE state = 'approved' AND apply_at IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE change_request_changes (
        change_request_id uuid NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
        position integer NOT NULL CHECK (position >= 0),
        flag_key varchar(64) NOT NULL,
        flag_id uuid,
        before jsonb CHECK (before IS NULL OR jsonb_typeof(before) = 'object'),
        after jsonb CHECK (after IS NULL OR jsonb_typeof(after) = 'object'),
        flag_version integer,
        PRIMARY KEY (change_request_id, flag_key),
        UNIQUE (change_request_id, position),
        CHECK ((before IS NULL) = (flag_id IS NULL) AND (flag_id IS NULL) = (flag_version IS NULL)),
        CHECK (before IS NOT NULL OR after IS NOT NULL)
      )`);

    await queryRunner.query(`
      CREATE TABLE change_request_reviews (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        change_request_id uuid NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
        revision integer NOT NULL,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        decision varchar(8) NOT NULL CHECK (decision IN ('approve', 'decline')),
        comment text CHECK (char_length(comment) <= 2000),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT change_request_reviews_once UNIQUE (change_request_id, revision, user_id)
      )`);

    await queryRunner.query(`
      CREATE TABLE change_request_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        change_request_id uuid NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
        kind varchar(16) NOT NULL CHECK (kind IN ('opened', 'edited', 'approved', 'declined', 'applied', 'withdrawn', 'failed')),
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('session', 'apiKey', 'system')),
        actor_id uuid,
        actor_name text,
        details jsonb,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK ((actor_type = 'system') = (actor_id IS NULL))
      )`);
    await queryRunner.query(`CREATE INDEX change_request_events_request_idx ON change_request_events (change_request_id, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE change_request_events`);
    await queryRunner.query(`DROP TABLE change_request_reviews`);
    await queryRunner.query(`DROP TABLE change_request_changes`);
    await queryRunner.query(`DROP TABLE change_requests`);
  }
}
