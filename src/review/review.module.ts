import { Module } from '@nestjs/common';
import { ReviewSettings } from './review-settings.repository';

/** An organization's review setting (change requests, issue 34): the setting, its history, and the guard on direct writes. */
@Module({
  providers: [ReviewSettings],
  exports: [ReviewSettings],
})
export class ReviewModule {}
