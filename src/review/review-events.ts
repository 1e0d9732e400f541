import { Injectable } from '@nestjs/common';
import { OrganizationEvents } from '../events/organization-events';
import { ReviewHistoryRow } from './review-settings.repository';

/**
 * What hears of a committed change of the review setting (after the commit): the console's event stream
 * (`review-setting` with the history entry's id). Its webhook event is written in the change's transaction (ReviewService).
 */
@Injectable()
export class ReviewEvents {
  constructor(private readonly events: OrganizationEvents) {}

  changed(organizationId: string, entry: ReviewHistoryRow): void {
    this.events.announce(organizationId, { type: 'review-setting', id: entry.id });
  }
}
