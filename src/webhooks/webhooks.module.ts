import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { OutboxModule } from '../outbox/outbox.module';
import { WebhookChannel } from './webhook-channel';
import { WebhookEventsModule } from './webhook-events.module';
import { WebhookRetention } from './webhook-retention';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks (decisions.md, "Webhooks (turn 5)"): the endpoints' routes, the outbox's `webhook` channel that delivers
 * on this instance, and the 7-day retention. The write paths record events through WebhookEventsModule.
 */
@Module({
  imports: [OutboxModule, OrganizationsModule, WebhookEventsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookChannel, WebhookRetention],
})
export class WebhooksModule {}
