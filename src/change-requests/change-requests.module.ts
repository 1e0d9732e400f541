import { Module } from '@nestjs/common';
import { FlagsModule } from '../flags/flags.module';
import { MailModule } from '../mail/mail.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { ReviewSettingsModule } from '../review/review-settings.module';
import { ChangeRequestMail } from './change-request-mail';
import { ChangeRequestScheduler } from './change-request-scheduler';
import { ChangeRequestsController } from './change-requests.controller';
import { ChangeRequestsRepository } from './change-requests.repository';
import { ChangeRequestsService } from './change-requests.service';
import { WebhookEventsModule } from '../webhooks/webhook-events.module';

/** Change requests (issue 34): above flags, whose one audited write path applies them. */
@Module({
  imports: [FlagsModule, MailModule, OrganizationsModule, ReviewSettingsModule, WebhookEventsModule],
  controllers: [ChangeRequestsController],
  providers: [ChangeRequestMail, ChangeRequestsRepository, ChangeRequestsService, ChangeRequestScheduler],
  // The review setting settles pending requests again when it changes (ReviewService).
  exports: [ChangeRequestsRepository],
})
export class ChangeRequestsModule {}
