import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Transaction } from '../database/sql';
import { Outbox } from '../outbox/outbox';
import { MAIL_CHANNEL, MailChannel } from './mail-channel';
import { MailMessage, mailMessageProblem } from './mail-message';

/**
 * The service's mail (decisions.md, "Trust", Mail). The API, for the features that mail people (invitations,
 * verification, password reset, change-request notices):
 *
 * - `mailer.enabled`: whether mail is on (SMTP_URL and MAIL_FROM set). Off, nothing may be sent: a feature that
 *   would mail does what decisions.md says for that case (an invitation answers its `url` instead).
 * - `await mailer.send(tx, {to, subject, text, html?})`: writes the mail into the outbox in `tx`, the transaction of
 *   the change that causes it, and answers the outbox row's id. Nothing goes out unless `tx` commits; after the
 *   commit the mail is sent at least once, retried for 24 hours (MAIL_RETRY), by whichever instance claims it,
 *   surviving restarts. A failed send never fails the caller's request.
 * - `await mailer.delivery(db, id)`: where that mail stands (pending, succeeded, failed, attempts, last error), for
 *   a "delivery state" shown beside what caused it. Once settled, the row keeps only `to` and `subject`.
 *
 * `send` throws when mail is off or the message is malformed (one address in `to`, a one-line subject, a text):
 * both are bugs in the caller, raised before anything is written.
 */
@Injectable()
export class Mailer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly channel: MailChannel | null;

  constructor(
    private readonly outbox: Outbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.channel = config.mail ? new MailChannel(config.mail) : null;
    if (this.channel) outbox.register(this.channel);
  }

  get enabled(): boolean {
    return this.channel !== null;
  }

  async send(tx: Transaction, message: MailMessage): Promise<string> {
    if (!this.channel) throw new Error('Mail is off (SMTP_URL is not set): check Mailer.enabled before sending');
    const problem = mailMessageProblem(message);
    if (problem) throw new Error(`A mail that cannot be sent: ${problem}`);
    const { to, subject, text, html } = message;
    return this.outbox.enqueue(tx, MAIL_CHANNEL, html === undefined ? { to, subject, text } : { to, subject, text, html });
  }

  delivery(...args: Parameters<Outbox['state']>): ReturnType<Outbox['state']> {
    return this.outbox.state(...args);
  }

  /** Says once, at boot, whether mail is on and through which server (never its user or password). */
  onApplicationBootstrap(): void {
    const mail = this.config.mail;
    if (!mail) {
      this.logger.log('SMTP_URL is not set: mail is off (invitations answer with their link, for the inviter to pass on)');
      return;
    }
    const { host, port, secure } = mail.smtp;
    this.logger.log(`Mail is on: sent through ${secure ? 'smtps' : 'smtp'}://${host.includes(':') ? `[${host}]` : host}:${port} from ${mail.from}`);
  }

  /** Releases the transport; a send in flight ends by itself (one connection per message). */
  beforeApplicationShutdown(): void {
    this.channel?.close();
  }
}
