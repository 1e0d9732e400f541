import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { ReviewGate } from './review-gate';
import { ReviewSettings } from './review-settings.repository';

/**
 * The review setting as the write path reads it (ReviewSettings) and the guard on direct writes (ReviewGate): for
 * FlagsModule and the change requests, with no dependency on either.
 */
@Module({
  imports: [OrganizationsModule],
  providers: [ReviewSettings, ReviewGate],
  exports: [ReviewSettings, ReviewGate],
})
export class ReviewSettingsModule {}
