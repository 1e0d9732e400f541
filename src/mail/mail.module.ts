import { Module } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module';
import { Mailer } from './mailer';

/** Mail through the outbox: import this module and inject `Mailer` (see its comment for the API). */
@Module({ imports: [OutboxModule], providers: [Mailer], exports: [Mailer] })
export class MailModule {}
