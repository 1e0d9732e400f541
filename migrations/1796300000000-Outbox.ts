import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox (decisions.md, "Trust", Mail; "Webhooks", Delivery): what the service must send somewhere else (a mail,
 * later a webhook event), written in the transaction that causes it and delivered at least once by one worker on
 * whichever instance claims it (src/outbox). A row is `pending` until it is delivered (`succeeded`) or its channel
 * gives up on it (`failed`, with the last error). A pending row is due at `next_attempt_at`: when written, after a
 * failed attempt (the channel's retry policy), or when the lease of the instance sending it runs out (a claim moves
 * it forward by the lease, so a crashed instance's row is taken again later). `attempts` counts claims.
 *
 * The claim reads the due pending rows by `next_attempt_at`: a partial index holds only those, so delivered rows
 * cost the claim nothing however many are kept.
 */
export class Outbox1796300000000 implements MigrationInterface {
  name = 'Outbox1796300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        channel text NOT NULL CONSTRAINT outbox_channel_name CHECK (channel ~ '^[a-z][a-z0-9-]{0,31}$'),
        payload jsonb NOT NULL,
        state text NOT NULL DEFAULT 'pending' CONSTRAINT outbox_state CHECK (state IN ('pending', 'succeeded', 'failed')),
        attempts integer NOT NULL DEFAULT 0 CONSTRAINT outbox_attempts CHECK (attempts >= 0),
        next_attempt_at timestamptz NOT NULL,
        last_error text CONSTRAINT outbox_last_error_length CHECK (char_length(last_error) <= 1000),
        created_at timestamptz NOT NULL,
        delivered_at timestamptz,
        CONSTRAINT outbox_delivered_when_succeeded CHECK ((state = 'succeeded') = (delivered_at IS NOT NULL)),
        CONSTRAINT outbox_failed_says_why CHECK (state <> 'failed' OR last_error IS NOT NULL)
      )`);
    await queryRunner.query(`CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state = 'pending'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE outbox`);
  }
}
