import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionPrincipal } from '../auth/principal';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { Mailer } from '../mail/mailer';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { CreatedInvitationDto, CreateInvitationDto, InvitationDto } from './dto/people.dto';
import { InvitationDeliveryDto } from './dto/mail-links.dto';
import { InvitationsRepository } from './invitations.repository';
import { MailLinksErrors } from './mail-links.errors';
import { PeopleErrors } from './people.errors';
import { hashInvitationToken, INVITATION_TTL_MS, InvitationMailing, invitationDto, PeopleService } from './people.service';
import { UsersRepository } from './users.repository';
import { OutboxRowState } from '../outbox/outbox.repository';

/**
 * Invitations by mail (decisions.md, "Trust", Mail): with mail on, an invitation's link goes only to the invited
 * address, written in the invitation's own transaction (one that rolls back sends nothing), and is never answered;
 * the list shows where each mail stands, and a resend mails a new link (the old one stops working). With mail off,
 * invitations are PeopleService's as before: the link is answered to the inviter.
 */
@Injectable()
export class InvitationMail {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly people: PeopleService,
    private readonly invitations: InvitationsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersRepository,
    private readonly mailer: Mailer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  invite(principal: SessionPrincipal, dto: CreateInvitationDto): Promise<CreatedInvitationDto> {
    return this.people.invite(principal, dto, this.mailer.enabled ? this.mailing(principal) : undefined);
  }

  /** Pending invitations, each with where its mail stands when its link was mailed. */
  async list(organizationId: string): Promise<InvitationDto[]> {
    const rows = await this.invitations.listPendingWithMail(this.sql, organizationId, this.clock.now());
    return Promise.all(
      rows.map(async ({ mailId, ...invitation }) => {
        const dto = invitationDto(invitation);
        if (mailId === null) return dto;
        const state = await this.mailer.delivery(this.sql, mailId);
        return state ? { ...dto, delivery: deliveryDto(state) } : dto;
      }),
    );
  }

  /** Mails a new link for a pending invitation, valid 7 days from now; the previous link stops working. */
  async resend(principal: SessionPrincipal, invitationId: string): Promise<InvitationDto> {
    if (!this.mailer.enabled) throw MailLinksErrors.mailOff('invitations are not mailed; create a new one to get its link');
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const mailing = this.mailing(principal);
    return this.transactions.run(async (tx) => {
      const invitation = await this.invitations.renewLink(tx, principal.organizationId, invitationId, {
        tokenHash: hashInvitationToken(token),
        now,
        expiresAt: now + INVITATION_TTL_MS,
      });
      if (!invitation) throw PeopleErrors.pendingInvitationNotFound(invitationId);
      return { ...invitationDto(invitation), delivery: await mailing(tx, invitation, token) };
    });
  }

  private mailing(principal: SessionPrincipal): InvitationMailing {
    return async (tx, invitation, token) => {
      const organization = await this.organizations.findOrganization(tx, invitation.organizationId);
      const inviter = await this.users.find(tx, principal.id);
      const url = `${this.config.urls.publicUrl}/console/invitations/${token}`;
      const mailId = await this.mailer.send(tx, {
        to: invitation.email,
        subject: `Your invitation to ${oneLine(organization?.name ?? 'an organization')} on Flagstore`,
        text:
          `Hello,\r\n\r\n${inviter?.name ?? 'An admin'} invited you to join ${organization?.name ?? 'their organization'} on Flagstore ` +
          `as ${invitation.role}.\r\nJoin here within 7 days:\r\n\r\n${url}\r\n\r\n` +
          `The link works once, for ${invitation.email}. If you did not expect it, ignore this mail.\r\n`,
      });
      await this.invitations.recordMail(tx, invitation.id, mailId);
      return { state: 'pending', attempts: 0 };
    };
  }
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 200);
}

function deliveryDto(state: OutboxRowState): InvitationDeliveryDto {
  // A mail row is never skipped (only a queue's rows are); were it ever, it was not sent.
  const delivery: InvitationDeliveryDto = {
    state: state.state === 'succeeded' ? 'sent' : state.state === 'skipped' ? 'failed' : state.state,
    attempts: state.attempts,
  };
  if (state.lastError !== null) delivery.lastError = state.lastError;
  return delivery;
}
