import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { SignedInUser } from '../auth/principal';
import { RequestAuthenticator } from '../auth/request-authenticator';
import { PasswordHasher } from '../auth/sessions/password-hasher';
import { IssuedSession, SessionAuthenticator } from '../auth/sessions/session-authenticator';
import { SessionsRepository } from '../auth/sessions/sessions.repository';
import { SignInLimiter } from '../auth/sessions/sign-in-limiter';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { CLOCK, Clock } from '../common/clock';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { AcceptInvitationDto, ChangePasswordDto, LoginDto, SessionDto, SessionUserDto } from './dto/people.dto';
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

/** An accepted invitation: a new user signed in, or (`body` null) an existing one who joined with their session. */
export interface Acceptance {
  body: SessionDto | null;
  session: IssuedSession | null;
}

/**
 * Signing in and out, the session's body, a password change, and joining through an invitation's link. Failed
 * sign-ins are counted per email and per address before any password is hashed (SignInLimiter); an unknown email
 * costs the same hashing as a wrong password, and both answer the same 401.
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
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async login(request: IncomingMessage, dto: LoginDto): Promise<SignIn> {
    this.limiter.check(request, dto.email);
    const user = await this.users.findByEmail(this.sql, dto.email.trim());
    const matches = user?.passwordHash ? await this.hasher.verify(dto.password, user.passwordHash) : await this.hasher.verifyNothing(dto.password);
    if (!user || !matches) {
      this.limiter.recordFailure(request, dto.email);
      throw PeopleErrors.wrongCredentials();
    }
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
    return { user: SessionUserDto.from(user), organizations, csrfToken };
  }

  logout(signedIn: SignedInUser): Promise<void> {
    return this.sessions.end(signedIn.sessionId);
  }

  /** A new password; every other session of the user ends, this one goes on. */
  async changePassword(request: IncomingMessage, signedIn: SignedInUser, dto: ChangePasswordDto): Promise<void> {
    const user = await this.users.findWithPassword(this.sql, signedIn.userId);
    if (!user) throw PeopleErrors.userNotFound(signedIn.userId);
    if (user.passwordHash !== null) {
      this.limiter.check(request, user.email);
      if (dto.currentPassword === undefined || !(await this.hasher.verify(dto.currentPassword, user.passwordHash))) {
        this.limiter.recordFailure(request, user.email);
        throw PeopleErrors.wrongCurrentPassword();
      }
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
   * already has a user must be signed in as that user, and just joins.
   */
  async acceptInvitation(request: IncomingMessage, token: string, dto: AcceptInvitationDto): Promise<Acceptance> {
    const tokenHash = hashInvitationToken(token);
    // The session is checked before the transaction, so that a wrong one is refused without locking anything.
    const signedIn = await this.optionalSession(request);
    const passwordHash = dto.password === undefined ? undefined : await this.hasher.hash(dto.password);
    const acceptance = await this.transactions.run(async (tx): Promise<Acceptance & { joined: string }> => {
      const invitation = await this.invitations.lockByToken(tx, tokenHash);
      if (!invitation) throw PeopleErrors.invitationNotFound();
      if (invitation.acceptedAt) throw PeopleErrors.invitationUsed('accepted');
      if (invitation.withdrawnAt) throw PeopleErrors.invitationUsed('withdrawn');
      if (invitation.expiresAt.getTime() <= this.clock.now()) throw PeopleErrors.invitationUsed('expired');
      const existing = await this.users.findByEmail(tx, invitation.email);
      if (existing) {
        if (signedIn?.userId !== existing.id) throw PeopleErrors.signInToAccept(invitation.email);
        await this.join(tx, invitation, existing.id);
        return { body: null, session: null, joined: existing.id };
      }
      if (dto.name === undefined || passwordHash === undefined) throw PeopleErrors.nameAndPasswordRequired();
      // Unverified when the link was answered to the inviter: whoever holds it chose the password, not necessarily the
      // invited person. A mailed link was read at the invited address: verified.
      const user = await this.users.create(tx, invitation.email, dto.name, passwordHash, invitation.mailed);
      if (!user) throw PeopleErrors.emailTaken();
      await this.join(tx, invitation, user.id);
      const session = await this.sessions.issue(tx, user.id);
      const organizations = await this.users.organizationsOf(tx, user.id);
      return {
        session,
        body: { user: SessionUserDto.from(user), organizations, csrfToken: session.csrfToken },
        joined: user.id,
      };
    });
    this.bus.publish('user', acceptance.joined);
    return acceptance;
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
