import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Transaction } from '../database/sql';
import { Mailer } from '../mail/mailer';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { ActorRef, ChangeRequestsRepository } from './change-requests.repository';

/** What happened to a request, as its author is told. */
export type AuthorNotice =
  | { kind: 'approved' | 'declined'; by: ActorRef; comment?: string | null }
  | { kind: 'applied'; by: ActorRef; override?: string }
  | { kind: 'failed'; reason: string };

/**
 * Mail about change requests (decisions.md, "Change requests (turn 5)", Listing and hearing), written in the
 * transaction of the change that causes it: when a request opens, to the members who may review it (editors and
 * admins other than its author); when it is decided, applied or failed, to its author when a person. Only people with
 * a verified email who did not turn these mails off (`users.review_mail`). With mail off: nothing.
 */
@Injectable()
export class ChangeRequestMail {
  constructor(
    private readonly mailer: Mailer,
    private readonly requests: ChangeRequestsRepository,
    private readonly organizations: OrganizationsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async opened(tx: Transaction, organizationId: string, id: string, title: string, author: ActorRef): Promise<void> {
    if (!this.mailer.enabled) return;
    const recipients = await this.requests.mailRecipients(tx, organizationId, ['editor', 'admin'], null);
    const others = recipients.filter((person) => !(author.type === 'session' && person.id === author.id));
    if (others.length === 0) return;
    const organization = await this.organizationName(tx, organizationId);
    for (const person of others) {
      await this.mailer.send(tx, {
        to: person.email,
        subject: oneLine(`Change request to review in ${organization}: ${title}`),
        text:
          `Hello ${person.name},\r\n\r\n${whoOf(author)} opened a change request in ${organization} on Flagstore:\r\n\r\n  ${title}\r\n\r\n` +
          `Review it here:\r\n\r\n${this.link(organizationId, id)}\r\n\r\n${FOOTER}`,
      });
    }
  }

  async toAuthor(tx: Transaction, organizationId: string, id: string, title: string, author: ActorRef, notice: AuthorNotice): Promise<void> {
    if (!this.mailer.enabled || author.type !== 'session' || author.id === null) return;
    const [person] = await this.requests.mailRecipients(tx, organizationId, ['viewer', 'editor', 'admin'], author.id);
    if (!person) return;
    const organization = await this.organizationName(tx, organizationId);
    const what =
      notice.kind === 'failed'
        ? `could not be applied at its scheduled time, and failed:\r\n\r\n  ${notice.reason}`
        : notice.kind === 'applied'
          ? `was applied by ${whoOf(notice.by)}${notice.override ? `, overriding review (reason: ${notice.override})` : ''}.`
          : `was ${notice.kind} by ${whoOf(notice.by)}${notice.comment ? `:\r\n\r\n  ${notice.comment}` : '.'}`;
    await this.mailer.send(tx, {
      to: person.email,
      subject: oneLine(`Your change request in ${organization} ${notice.kind === 'failed' ? 'failed' : `was ${notice.kind}`}: ${title}`),
      text:
        `Hello ${person.name},\r\n\r\nyour change request in ${organization} on Flagstore,\r\n\r\n  ${title}\r\n\r\n${what}\r\n\r\n` +
        `See it here:\r\n\r\n${this.link(organizationId, id)}\r\n\r\n${FOOTER}`,
    });
  }

  /** The request in the console, which switches to its organization (`?org=`) for a person in several. */
  private link(organizationId: string, id: string): string {
    return `${this.config.urls.publicUrl}/console/change-requests/${encodeURIComponent(id)}?org=${organizationId}`;
  }

  private async organizationName(tx: Transaction, organizationId: string): Promise<string> {
    return (await this.organizations.findOrganization(tx, organizationId))?.name ?? 'your organization';
  }
}

const FOOTER = 'To stop these mails about change requests, untick "Mail me about change requests" in the console.\r\n';

function whoOf(actor: ActorRef): string {
  if (actor.type === 'system') return 'the schedule';
  if (actor.type === 'apiKey') return `the API key ${actor.name ?? actor.id ?? ''}`.trim();
  return actor.name ?? 'someone';
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 200);
}
