import { Transporter, createTransport } from 'nodemailer';
import { MailConfig } from '../config/app-config';
import { OutboxChannel, OutboxDelivery, PermanentDeliveryError } from '../outbox/outbox-channel';
import { RetryPolicy } from '../outbox/retry-policy';
import { MailMessage, SettledMail } from './mail-message';

export const MAIL_CHANNEL = 'mail';

/**
 * Mail is tried again for 24 hours (decisions.md, "Trust", Mail): soon at first (a server restarting), then every
 * two hours or so, about 17 attempts in all.
 */
export const MAIL_RETRY: RetryPolicy = {
  delaysMs: [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000],
  windowMs: 24 * 3_600_000,
  jitter: 0.2,
};

/** The SMTP conversation's own limits: well within the attempt's, so that nodemailer reports which step hung. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;
export const MAIL_ATTEMPT_TIMEOUT_MS = 60_000;

/**
 * The outbox's `mail` channel: sends a row's message through the SMTP server of SMTP_URL, From MAIL_FROM, one
 * connection per message (nodemailer's plain SMTP transport: nothing stays open between sends).
 *
 * A recipient the server refuses for good (a 5xx reply to RCPT TO) fails the row at once; everything else (the
 * server away, a 4xx, a refused login or sender, which the operator may still fix) is tried again by MAIL_RETRY.
 */
export class MailChannel implements OutboxChannel<MailMessage> {
  readonly name = MAIL_CHANNEL;
  readonly retry = MAIL_RETRY;
  readonly attemptTimeoutMs = MAIL_ATTEMPT_TIMEOUT_MS;
  private readonly transport: Transporter;
  /** Texts that must never reach a log line or `last_error`: the password, as given and as AUTH sends it. */
  private readonly secrets: string[];
  /** MAIL_FROM's domain, for the Message-ID. */
  private readonly domain: string;

  constructor(private readonly config: MailConfig) {
    const { host, port, secure, user, password } = config.smtp;
    this.transport = createTransport({
      host,
      port,
      secure,
      auth: user === undefined ? undefined : { user, pass: password ?? '' },
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      // A message names no file or URL to attach, and never will from here.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    this.domain = /@([^>\s]+)>?$/.exec(config.from)?.[1] ?? 'localhost';
    this.secrets =
      password === undefined || password === ''
        ? []
        : [password, Buffer.from(`\u0000${user}\u0000${password}`).toString('base64'), Buffer.from(password).toString('base64')];
  }

  async send({ id, payload }: OutboxDelivery<MailMessage>, signal: AbortSignal): Promise<void> {
    try {
      await this.transport.sendMail({
        from: this.config.from,
        to: payload.to,
        subject: payload.subject,
        text: payload.text,
        html: payload.html,
        // From the outbox row's id: a mail sent twice (at least once) carries the same Message-ID both times.
        messageId: `<${id}@${this.domain}>`,
        // The outbox's attempt timeout closes the connection.
        signal,
      });
    } catch (error) {
      const failure = error as { code?: string; command?: string; permanent?: boolean; message?: string };
      if (failure.code === 'EENVELOPE' && failure.command === 'RCPT TO' && failure.permanent === true) {
        throw new PermanentDeliveryError(`The mail server refused the recipient: ${failure.message ?? ''}`);
      }
      throw error;
    }
  }

  settledPayload(payload: MailMessage): SettledMail {
    return { to: payload.to, subject: payload.subject };
  }

  describeError(error: unknown): string {
    let text = error instanceof Error ? error.message : String(error);
    for (const secret of this.secrets) text = text.split(secret).join('***');
    return text;
  }

  close(): void {
    this.transport.close();
  }
}
