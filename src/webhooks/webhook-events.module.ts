import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { WebhookEvents } from './webhook-events';
import { WebhooksRepository } from './webhooks.repository';

/**
 * What the write paths (flags, change requests, the review setting, storage) use to write webhook events in their
 * transactions, with no dependency on the endpoints' routes or the delivery worker (WebhooksModule).
 */
@Module({
  imports: [OutboxModule],
  providers: [WebhookEvents, WebhooksRepository],
  exports: [WebhookEvents, WebhooksRepository],
})
export class WebhookEventsModule {}
