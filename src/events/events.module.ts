import { Global, Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { OrganizationEvents } from './organization-events';

/** The organization event stream (GET /v1/events); global, so that flags and storage announce their changes on it. */
@Global()
@Module({ controllers: [EventsController], providers: [OrganizationEvents], exports: [OrganizationEvents] })
export class EventsModule {}
