import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { Sql } from '../database/sql';
import { WebhooksRepository } from './webhooks.repository';
import { WEBHOOK_RETENTION_MS } from './webhooks.service';

const HOUR = 3_600_000;
/** Rows of each kind one pass deletes at most, so that a pass is short whatever has piled up; the next one goes on. */
const PURGE_BATCH = 5_000;

/**
 * Forgets webhook events, attempts and settled deliveries older than 7 days (what the deliveries list shows and what
 * can be sent again), hourly on every instance: the deletes are idempotent, so instances need not agree who does it.
 * A delivery still pending keeps its event.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private timer: ClockTimer | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly webhooks: WebhooksRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = this.clock.every(
      HOUR,
      () => void this.purge().catch((error: Error) => this.logger.warn(`Webhook retention waits: ${error.message}`)),
    );
  }

  beforeApplicationShutdown(): void {
    this.timer?.stop();
    this.timer = null;
  }

  /** One pass; answers how many rows it deleted. */
  purge(): Promise<number> {
    return this.webhooks.purgeBefore(this.sql, new Date(this.clock.now() - WEBHOOK_RETENTION_MS), PURGE_BATCH);
  }
}
