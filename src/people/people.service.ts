import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionPrincipal } from '../auth/principal';
import { Role } from '../auth/roles';
import { PasswordHasher } from '../auth/sessions/password-hasher';
import { SessionsRepository } from '../auth/sessions/sessions.repository';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { CLOCK, Clock } from '../common/clock';
import { pageWindow, totalPages } from '../common/dto/pagination';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { ApiKeyDto, FirstAdminDto, FirstAdminUserDto } from '../organizations/dto/organization.dto';
import { OrganizationFounder } from '../organizations/organization-founder';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import {
  AddMemberDto,
  CreatedInvitationDto,
  CreateInvitationDto,
  CreateUserDto,
  InvitationDto,
  ListUsersQueryDto,
  MemberDto,
  MemberListDto,
  UserDto,
  UserPageDto,
} from './dto/people.dto';
import { InvitationDeliveryDto } from './dto/mail-links.dto';
import { InvitationsRepository } from './invitations.repository';
import { MembershipsRepository } from './memberships.repository';
import { Invitation } from './people.model';
import { PeopleErrors } from './people.errors';
import { UsersRepository } from './users.repository';

/** Mails an invitation's link in the invitation's transaction (InvitationMail); answers where that mail stands. */
export type InvitationMailing = (tx: Transaction, invitation: Invitation, token: string) => Promise<InvitationDeliveryDto>;

/** How long an invitation's link works. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/**
 * Users and their memberships: what the admin API and the CLI manage, and what an organization's admins manage of
 * their own organization (members, invitations). Every change that could leave an organization without an admin
 * runs under the organization's row lock, so that two of them racing (two admins removing each other) are judged one
 * after the other. After a commit that changed someone's memberships, the invalidation bus's `user` message has every
 * instance read their sessions again (and `session` drops the sessions a commit ended).
 */
@Injectable()
export class PeopleService implements OrganizationFounder {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly memberships: MembershipsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsRepository,
    private readonly bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async createUser(dto: CreateUserDto): Promise<UserDto> {
    const passwordHash = dto.password === undefined ? null : await this.hasher.hash(dto.password);
    const user = await this.users.create(this.sql, dto.email, dto.name, passwordHash, true);
    if (!user) throw PeopleErrors.emailTaken();
    return UserDto.from(user);
  }

  /** The CLI's verify-user: the operator vouches for the user's email (decisions.md, "Proof of an email"). */
  async verifyUser(email: string): Promise<UserDto> {
    const user = await this.users.findByEmail(this.sql, email);
    const verified = user && (await this.users.markEmailVerified(this.sql, user.id));
    if (!verified) throw PeopleErrors.userWithEmailNotFound(email);
    return UserDto.from(verified);
  }

  async listUsers(query: ListUsersQueryDto): Promise<UserPageDto> {
    const { rows, total } = await this.users.list(this.sql, { search: query.search, ...pageWindow(query) });
    return { results: rows.map((user) => UserDto.from(user)), total, page: query.page, totalPages: totalPages(total, query.limit) };
  }

  /** Ends the user's sessions and memberships; refused while they are the last admin of an organization. */
  async deleteUser(userId: string): Promise<void> {
    const ended = await this.transactions.run(async (tx) => {
      if (!(await this.users.lock(tx, userId))) throw PeopleErrors.userNotFound(userId);
      const adminOf = await this.memberships.adminOf(tx, userId);
      const alone: string[] = [];
      for (const organizationId of adminOf) {
        await this.organizations.lockOrganization(tx, organizationId);
        if ((await this.memberships.adminCount(tx, organizationId)) <= 1) alone.push(organizationId);
      }
      if (alone.length > 0) throw PeopleErrors.lastAdminOf(alone);
      await this.memberships.removeAll(tx, userId);
      const sessionIds = await this.sessions.endAllOf(tx, userId);
      await this.users.markDeleted(tx, userId);
      return sessionIds;
    });
    for (const sessionId of ended) this.bus.publish('session', sessionId);
    this.bus.publish('user', userId);
  }

  /** OrganizationFounder: the organization being created gets `admin` (found by email, else created) as its admin. */
  async found(tx: Transaction, organizationId: string, admin: FirstAdminDto): Promise<FirstAdminUserDto> {
    let user = await this.users.findByEmail(tx, admin.email);
    // Nobody types a password for somebody else: an existing user keeps theirs, and one sent for them is refused, not ignored.
    if (user && admin.password !== undefined) throw OrganizationsErrors.firstAdminPasswordForExistingUser(admin.email);
    if (!user) {
      if (admin.name === undefined) throw OrganizationsErrors.firstAdminFieldMissing('admin.name');
      if (admin.password === undefined) throw OrganizationsErrors.firstAdminFieldMissing('admin.password');
      const created = await this.users.create(tx, admin.email, admin.name, await this.hasher.hash(admin.password), true);
      // Created by another transaction since the read: a unique violation has aborted this one, so start over.
      if (!created) throw PeopleErrors.emailTaken();
      user = { ...created, passwordHash: null };
    }
    await this.memberships.add(tx, organizationId, user.id, 'admin');
    return { id: user.id, email: user.email, name: user.name };
  }

  async addMember(organizationId: string, dto: AddMemberDto): Promise<MemberDto> {
    const member = await this.transactions.run(async (tx) => {
      if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationNotFound(organizationId);
      const user = await this.users.find(tx, dto.userId);
      if (!user) throw PeopleErrors.userNotFound(dto.userId);
      const added = await this.memberships.add(tx, organizationId, user.id, dto.role);
      if (!added) throw PeopleErrors.alreadyAMember();
      return { userId: user.id, email: user.email, name: user.name, role: dto.role, createdAt: added.createdAt.toISOString() };
    });
    this.bus.publish('user', member.userId);
    return member;
  }

  async listMembers(organizationId: string, former: boolean): Promise<MemberListDto> {
    const members = (await this.memberships.list(this.sql, organizationId)).map((member) => MemberDto.from(member));
    if (!former) return { members };
    const left = await this.memberships.listFormer(this.sql, organizationId);
    return { members, former: left.map((member) => ({ userId: member.userId, name: member.name, leftAt: member.leftAt.toISOString() })) };
  }

  /** A new role; demoting the last admin is refused. Takes effect on the member's next request, everywhere. */
  async setRole(organizationId: string, userId: string, role: Role): Promise<MemberDto> {
    const member = await this.transactions.run(async (tx) => {
      const current = await this.lockedMember(tx, organizationId, userId);
      if (current.role === 'admin' && role !== 'admin' && (await this.memberships.adminCount(tx, organizationId)) <= 1) {
        throw PeopleErrors.lastAdmin();
      }
      await this.memberships.setRole(tx, organizationId, userId, role);
      return { ...MemberDto.from(current), role };
    });
    this.bus.publish('user', userId);
    return member;
  }

  /** Ends a membership; removing the last admin is refused. Their sessions lose the organization on the next request. */
  async removeMember(organizationId: string, userId: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const current = await this.lockedMember(tx, organizationId, userId);
      if (current.role === 'admin' && (await this.memberships.adminCount(tx, organizationId)) <= 1) throw PeopleErrors.lastAdmin();
      await this.memberships.remove(tx, organizationId, userId);
    });
    this.bus.publish('user', userId);
  }

  /**
   * An invitation with a single-use link to the console's page where the invited person joins: answered, or with
   * `mail` (mail on, InvitationMail) mailed in the invitation's transaction and not answered.
   */
  async invite(principal: SessionPrincipal, dto: CreateInvitationDto, mail?: InvitationMailing): Promise<CreatedInvitationDto> {
    const token = randomBytes(32).toString('base64url');
    const invitation = await this.transactions.run(async (tx) => {
      await this.organizations.lockOrganization(tx, principal.organizationId);
      const existing = await this.users.findByEmail(tx, dto.email);
      if (existing && (await this.memberships.find(tx, principal.organizationId, existing.id))) throw PeopleErrors.emailAlreadyAMember();
      const created = await this.invitations.create(tx, {
        organizationId: principal.organizationId,
        email: dto.email,
        role: dto.role,
        tokenHash: hashInvitationToken(token),
        invitedBy: principal.id,
        expiresAt: this.clock.now() + INVITATION_TTL_MS,
      });
      return { ...invitationDto(created), ...(mail ? { delivery: await mail(tx, created, token) } : {}) };
    });
    if (invitation.delivery) return invitation;
    return { ...invitation, url: `${this.config.urls.publicUrl}/console/invitations/${token}` };
  }

  async listInvitations(organizationId: string): Promise<InvitationDto[]> {
    return (await this.invitations.listPending(this.sql, organizationId, this.clock.now())).map(invitationDto);
  }

  async withdrawInvitation(organizationId: string, invitationId: string): Promise<void> {
    if (!(await this.invitations.withdraw(this.sql, organizationId, invitationId))) throw PeopleErrors.pendingInvitationNotFound(invitationId);
  }

  /** Every key the organization was issued, revoked ones with revokedAt; never the key or its hash. */
  async listApiKeys(organizationId: string): Promise<ApiKeyDto[]> {
    return (await this.organizations.listApiKeys(this.sql, organizationId)).map((key) => ApiKeyDto.from(key));
  }

  private async lockedMember(tx: Transaction, organizationId: string, userId: string) {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationNotFound(organizationId);
    const member = await this.memberships.find(tx, organizationId, userId);
    if (!member) throw PeopleErrors.memberNotFound(userId);
    return member;
  }
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function invitationDto(invitation: Invitation): InvitationDto {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    createdAt: invitation.createdAt.toISOString(),
    expiresAt: invitation.expiresAt.toISOString(),
  };
}
