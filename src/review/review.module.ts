import { Module } from '@nestjs/common';
import { FlagsModule } from '../flags/flags.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { ReviewEvents } from './review-events';
import { ReviewSettingsModule } from './review-settings.module';
import { ReviewController } from './review.controller';
import { ReviewService } from './review.service';
import { WebhookEventsModule } from '../webhooks/webhook-events.module';
import { ChangeRequestsModule } from '../change-requests/change-requests.module';

/** The review setting's routes: GET/PUT /v1/organization/review and its history (change requests, issue 34). */
@Module({
  imports: [OrganizationsModule, FlagsModule, ReviewSettingsModule, WebhookEventsModule, ChangeRequestsModule],
  controllers: [ReviewController],
  providers: [ReviewService, ReviewEvents],
  exports: [ReviewSettingsModule],
})
export class ReviewModule {}
