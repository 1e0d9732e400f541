import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { SignedInUser } from '../auth/principal';
import { RequestAuthenticator } from '../auth/request-authenticator';
import { PasswordHasher } from '../auth/sessions/password-hasher';
import { IssuedSession, SessionAuthenticator } from '../auth/sessions/session-authenticator';
import { SessionsRepository } from '../auth/sessions/sessions.repository';
import { SignInLimiter } from '../auth/sessions/sign-in-limiter';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { OwnOrganizationsService } from '../own-organizations/own-organizations.service';
import { CLOCK, Clock } from '../common/clock';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { AcceptInvitationDto, ChangePasswordDto, InvitationPreviewDto, LoginDto, SessionDto, SessionUserDto, UpdateMeDto } from './dto/people.dto';
import { InvitationsRepository } from './invitations.repository';
import { MembershipsRepository } from './memberships.repository';
import { Invitation } from './people.model';
import { PeopleErrors } from './people.errors';
import { hashInvitationToken } from './people.service';
import { UsersRepository } from './users.repository';

/** A sign-in's outcome: the body to answer, and the session whose token goes into the cookie. */
export interface SignIn {
  body: SessionDto;
  session: IssuedSession;
}

/** What an invitation's link carries: 32 random bytes, base64url. */
const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** An accepted invitation: a new user signed in, or (`body` null) an existing one who joined with their session. */
export interface Acceptance {
  body: SessionDto | null;
  session: IssuedSession | null;
}

/**
 * Signing in and out, the session's body, a password change, and joining through an invitation's link. Sign-in
 * attempts are taken from the email's and the address's budgets before any password is hashed, and a successful one
 * gives its attempt back (SignInLimiter); an unknown email costs the same hashing as a wrong password, and both answer
 * the same 401.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly memberships: MembershipsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly hasher: PasswordHasher,
    private readonly limiter: SignInLimiter,
    private readonly sessions: SessionAuthenticator,
    private readonly sessionRows: SessionsRepository,
    private readonly requests: RequestAuthenticator,
    private readonly bus: InvalidationBus,
    private readonly ownOrganizations: OwnOrganizationsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async login(request: IncomingMessage, dto: LoginDto): Promise<SignIn> {
    // Taken before anything is looked up or hashed: attempts sent at once are counted one by one.
    const attempt = await this.limiter.take(request, dto.email);
    const user = await this.users.findByEmail(this.sql, dto.email);
    const matches = user?.passwordHash ? await this.hasher.verify(dto.password, user.passwordHash) : await this.hasher.verifyNothing(dto.password);
    if (!user || !matches) throw PeopleErrors.wrongCredentials();
    await attempt.giveBack();
    return this.signIn(this.sql, user.id);
  }

  /** A session for a user whose identity was established elsewhere (single sign-on). */
  signIn(db: Db, userId: string): Promise<SignIn> {
    return this.sessions.issue(db, userId).then(async (session) => ({ session, body: await this.body(userId, session.csrfToken) }));
  }

  /** GET /auth/session: who is signed in, their organizations, and the session's CSRF token. */
  async body(userId: string, csrfToken: string): Promise<SessionDto> {
    const user = await this.users.find(this.sql, userId);
    if (!user) throw PeopleErrors.userNotFound(userId);
    const organizations = await this.users.organizationsOf(this.sql, userId);
    const organizationCreation = await this.ownOrganizations.creationFor(this.sql, userId);
    return { user: SessionUserDto.from(user), organizations, csrfToken, organizationCreation };
  }

  /** PATCH /auth/me: the person's own settings (whether they are mailed about change requests). */
  async updateMe(signedIn: SignedInUser, dto: UpdateMeDto): Promise<SessionUserDto> {
    const user = await this.users.setReviewMail(this.sql, signedIn.userId, dto.reviewMail);
    if (!user) throw PeopleErrors.userNotFound(signedIn.userId);
    return SessionUserDto.from(user);
  }

  logout(signedIn: SignedInUser): Promise<void> {
    return this.sessions.end(signedIn.sessionId);
  }

  /** A new password; every other session of the user ends, this one goes on. */
  async changePassword(request: IncomingMessage, signedIn: SignedInUser, dto: ChangePasswordDto): Promise<void> {
    const user = await this.users.findWithPassword(this.sql, signedIn.userId);
    if (!user) throw PeopleErrors.userNotFound(signedIn.userId);
    if (user.passwordHash !== null) {
      const attempt = await this.limiter.take(request, user.email);
      if (dto.currentPassword === undefined || !(await this.hasher.verify(dto.currentPassword, user.passwordHash))) {
        throw PeopleErrors.wrongCurrentPassword();
      }
      await attempt.giveBack();
    }
    const passwordHash = await this.hasher.hash(dto.newPassword);
    const ended = await this.transactions.run(async (tx) => {
      await this.users.setPassword(tx, user.id, passwordHash);
      return this.sessionRows.endAllOf(tx, user.id, signedIn.sessionId);
    });
    for (const sessionId of ended) this.bus.publish('session', sessionId);
  }

  /**
   * Joins the invitation's organization: a new user (name and password) is created and signed in; a person who
   * already has a user must be signed in as that user, and just joins. Counted against the address's sign-in budget
   * before anything else; the invitation is looked up and locked before a password is hashed, so that an unknown,
   * used or expired link costs no hashing. Whether the invited email has an account is never told: without the
   * invited person's session, an empty body and a name and password for an email with an account both answer 401
   * SIGN_IN_REQUIRED, and a password sent with a valid link is hashed in either case.
   */
  async acceptInvitation(request: IncomingMessage, token: string, dto: AcceptInvitationDto): Promise<Acceptance> {
    const attempt = await this.limiter.take(request);
    if (!INVITATION_TOKEN.test(token)) throw PeopleErrors.invitationNotFound();
    if ((dto.name === undefined) !== (dto.password === undefined)) throw PeopleErrors.nameAndPasswordTogether();
    // The session is checked before the transaction, so that a wrong one is refused without locking anything.
    const signedIn = await this.optionalSession(request);
    const acceptance = await this.transactions.run(async (tx): Promise<Acceptance & { joined: string }> => {
      const invitation = await this.invitations.lockByToken(tx, hashInvitationToken(token));
      if (!invitation) throw PeopleErrors.invitationNotFound();
      if (invitation.acceptedAt) throw PeopleErrors.invitationUsed('accepted');
      if (invitation.withdrawnAt) throw PeopleErrors.invitationUsed('withdrawn');
      if (invitation.expiresAt.getTime() <= this.clock.now()) throw PeopleErrors.invitationUsed('expired');
      const passwordHash = dto.password === undefined ? undefined : await this.hasher.hash(dto.password);
      const existing = await this.users.findByEmail(tx, invitation.email);
      if (existing) {
        if (signedIn?.userId !== existing.id) throw PeopleErrors.signInRequired();
        await this.join(tx, invitation, existing.id);
        return { body: null, session: null, joined: existing.id };
      }
      if (dto.name === undefined || passwordHash === undefined) throw PeopleErrors.signInRequired();
      // Unverified when the link was answered to the inviter: whoever holds it chose the password, not necessarily the
      // invited person. A mailed link was read at the invited address: verified.
      const user = await this.users.create(tx, invitation.email, dto.name, passwordHash, invitation.mailed);
      // Made by another request since the read (its unique violation has aborted this transaction): as above.
      if (!user) throw PeopleErrors.signInRequired();
      await this.join(tx, invitation, user.id);
      const session = await this.sessions.issue(tx, user.id);
      const organizations = await this.users.organizationsOf(tx, user.id);
      return {
        session,
        body: {
          user: SessionUserDto.from(user),
          organizations,
          csrfToken: session.csrfToken,
          organizationCreation: await this.ownOrganizations.creationFor(tx, user.id),
        },
        joined: user.id,
      };
    });
    await attempt.giveBack();
    this.bus.publish('user', acceptance.joined);
    return acceptance;
  }

  /**
   * What the invitation's page shows before anyone accepts: the organization, the role, who invited and the email, for a
   * pending invitation (404 otherwise), on the address's sign-in budget. Never whether the email has an account.
   */
  async describeInvitation(request: IncomingMessage, token: string): Promise<InvitationPreviewDto> {
    const attempt = await this.limiter.take(request);
    const invitation = INVITATION_TOKEN.test(token) ? await this.invitations.previewByToken(this.sql, hashInvitationToken(token)) : null;
    if (!invitation || invitation.acceptedAt || invitation.withdrawnAt || invitation.expiresAt.getTime() <= this.clock.now()) {
      throw PeopleErrors.invitationNotFound();
    }
    await attempt.giveBack();
    return {
      organization: { name: invitation.organizationName },
      role: invitation.role,
      invitedBy: invitation.invitedByName === null ? null : { name: invitation.invitedByName },
      email: invitation.email,
      expiresAt: invitation.expiresAt.toISOString(),
    };
  }

  private async join(tx: Transaction, invitation: Invitation, userId: string): Promise<void> {
    if (!(await this.memberships.add(tx, invitation.organizationId, userId, invitation.role))) throw PeopleErrors.alreadyAMember();
    await this.invitations.markAccepted(tx, invitation.id, userId);
  }

  /** The session the request carries, if it is live; a dead one is as good as none here (a new user may accept). */
  private async optionalSession(request: IncomingMessage): Promise<SignedInUser | null> {
    if (request.headers.cookie === undefined) return null;
    try {
      return await this.requests.signedIn(request);
    } catch (error) {
      if (error instanceof UnauthorizedException) return null;
      throw error; // a live session without its CSRF token, or too many failures from the address
    }
  }
}
