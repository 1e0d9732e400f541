import { Module } from '@nestjs/common';
import { Outbox } from './outbox';
import { OutboxRepository } from './outbox.repository';

/**
 * The outbox shared by every channel (mail now, webhook events next). A channel's module imports this one and, from
 * its own constructor, registers its sender: `outbox.register({name, retry, attemptTimeoutMs, send, ...})`; its code
 * then writes rows with `outbox.enqueue(tx, name, payload)` in the transaction of the change.
 */
@Module({ providers: [Outbox, OutboxRepository], exports: [Outbox] })
export class OutboxModule {}
