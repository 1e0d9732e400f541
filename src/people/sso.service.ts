import { Inject, Injectable, Logger } from '@nestjs/common';
import { IssuedSession, SessionAuthenticator } from '../auth/sessions/session-authenticator';
import { SessionsRepository } from '../auth/sessions/sessions.repository';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SIGNING_SECRET } from '../config/signing-secret';
import { Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { normalEmail } from './email-address';
import { InvitationsRepository } from './invitations.repository';
import { MembershipsRepository } from './memberships.repository';
import { OidcError, OidcFailure } from './oidc/oidc-errors';
import { openPending, sealPending } from './oidc/oidc-pending';
import { isLocalReturnTo, OidcIdentity, OidcSignIn } from './oidc/oidc-sign-in';
import { UserIdentitiesRepository } from './user-identities.repository';
import { EmailTokensRepository } from './email-tokens.repository';
import { UsersRepository } from './users.repository';

/** OpenID Connect Core 2: `sub` is at most 255 ASCII characters (and user_identities holds no more). */
const MAX_SUBJECT_LENGTH = 255;

/** Where the provider sends the browser back, under base_url. */
export const SSO_CALLBACK_PATH = '/auth/sso/callback';
/** Where a sign-in goes when it names nowhere (or somewhere off this service). */
export const DEFAULT_RETURN_TO = '/console';

/** A single sign-on that cannot sign anyone in: the status and a message for the person, shown on a page. */
export class SsoRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The landing page's words when a sign-in took an unverified account over (decisions.md, "Proof of an email"). */
export const TAKEN_OVER_NOTICE =
  'This account was taken over by single sign-on: its password was removed and its other sessions ended. From now on you sign in ' +
  'here with single sign-on. Whoever had set that password (an invitation link reaches whoever holds it) can no longer use the account.';

/** A single sign-on that signed someone in: the session, where they go next, and whether it took the account over. */
export interface SsoSignIn {
  session: IssuedSession;
  returnTo: string;
  takenOver: boolean;
}

/**
 * Single sign-on (README, "Single sign-on"; decisions.md, "Proof of an email"): the OpenID Connect code flow through
 * OidcSignIn, and what its answer means here. An identity (the provider's `iss` and `sub`) is linked to a user at its
 * first sign-in and signs into that user from then on, whatever email the provider sends. Without a link, the
 * provider's verified email:
 * - of a verified user: signs them in and links the identity (unless the user is linked to another identity there);
 * - of an unverified user (made through an invitation link, whose holder chose the password): takes the account over:
 *   its password goes, its sessions end everywhere, its email is verified, the identity is linked, and the landing
 *   page says so;
 * - of nobody, with pending invitations for it: makes a verified user without a password;
 * anyone else is refused. Every sign-in then accepts the pending invitations for the user's email (verified by now).
 * The session issued is the same as a password sign-in's.
 */
@Injectable()
export class SsoService {
  private readonly logger = new Logger(SsoService.name);
  private readonly oidc?: OidcSignIn;

  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly identities: UserIdentitiesRepository,
    private readonly memberships: MembershipsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly sessions: SessionAuthenticator,
    private readonly sessionRows: SessionsRepository,
    private readonly emailTokens: EmailTokensRepository,
    private readonly bus: InvalidationBus,
    @Inject(SIGNING_SECRET) private readonly secret: Buffer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (config.oidc) {
      this.oidc = new OidcSignIn({ ...config.oidc, redirectUri: `${config.urls.baseUrl}${SSO_CALLBACK_PATH}` }, { clock: () => this.clock.now() });
    }
  }

  get enabled(): boolean {
    return this.oidc !== undefined;
  }

  /** The provider's URL to send the browser to, and the sealed pending sign-in for its cookie. */
  async start(returnTo: string | undefined): Promise<{ url: string; pending: string }> {
    const oidc = this.configured();
    const target = returnTo !== undefined && isLocalReturnTo(returnTo) ? returnTo : DEFAULT_RETURN_TO;
    try {
      const { url, pending } = await oidc.start(target);
      return { url, pending: sealPending(pending, this.secret) };
    } catch (error) {
      throw this.refusal(error);
    }
  }

  /** The session of the person the provider signed in, and where they go next; else an SsoRefusal. */
  async finish(callbackUrl: string, sealed: string | undefined): Promise<SsoSignIn> {
    const oidc = this.configured();
    const pending = sealed === undefined ? null : openPending(sealed, this.secret, this.clock.now());
    if (pending === null) throw this.refusal(new OidcError(OidcFailure.STATE_MISMATCH, 'no live pending sign-in cookie'));
    let identity: OidcIdentity;
    try {
      identity = await oidc.finish(callbackUrl, pending);
    } catch (error) {
      throw this.refusal(error);
    }
    if (identity.subject.length > MAX_SUBJECT_LENGTH) {
      this.logger.warn(`Single sign-on failed: the provider sent a subject of ${identity.subject.length} characters`);
      throw new SsoRefusal(502, 'Your sign-in provider sent an account identifier (sub) longer than OpenID Connect allows.');
    }
    // The provider's spelling of the email is not ours: users and invitations hold the normal form.
    const email = normalEmail(identity.email);
    if (email === null) throw new SsoRefusal(403, `Your sign-in provider gave ${identity.email}, which is not an email address Flagstore can use.`);
    const { session, takenOver } = await this.signIn({ ...identity, email });
    return { session, returnTo: pending.returnTo, takenOver };
  }

  private async signIn(identity: OidcIdentity): Promise<{ session: IssuedSession; takenOver: boolean }> {
    const outcome = await this.transactions.run(async (tx) => {
      const linked = await this.identities.userOf(tx, identity);
      const { userId, takenOver, ended } = linked !== null ? { userId: linked, takenOver: false, ended: [] } : await this.firstSignIn(tx, identity);
      const user = await this.users.find(tx, userId);
      if (!user) throw new SsoRefusal(409, 'Your account changed during the sign-in; please sign in again.');
      // Linked users are verified (linking verifies): the check keeps invitations out of an unverified account regardless.
      const invitations = user.emailVerified ? await this.invitations.pendingFor(tx, user.email, this.clock.now()) : [];
      for (const invitation of invitations) {
        // Already a member (joined meanwhile): the invitation stays pending, to expire or be withdrawn.
        if (await this.memberships.add(tx, invitation.organizationId, userId, invitation.role)) {
          await this.invitations.markAccepted(tx, invitation.id, userId);
        }
      }
      return { session: await this.sessions.issue(tx, userId), userId, takenOver, ended };
    });
    for (const sessionId of outcome.ended) this.bus.publish('session', sessionId);
    this.bus.publish('user', outcome.userId);
    return { session: outcome.session, takenOver: outcome.takenOver };
  }

  /** An identity without a link: only the provider's verified email can say whose it is; the link is made here. */
  private async firstSignIn(tx: Transaction, identity: OidcIdentity): Promise<{ userId: string; takenOver: boolean; ended: string[] }> {
    if (!identity.emailVerified) {
      throw new SsoRefusal(403, `Your sign-in provider has not verified the email ${identity.email}, so it cannot sign you in here.`);
    }
    const found = await this.users.findByEmail(tx, identity.email);
    if (!found) {
      if ((await this.invitations.pendingFor(tx, identity.email, this.clock.now())).length === 0) {
        throw new SsoRefusal(403, `There is no Flagstore account for ${identity.email}. Ask an admin of your studio to invite you.`);
      }
      const userId = await this.createUser(tx, identity);
      await this.link(tx, identity, userId);
      return { userId, takenOver: false, ended: [] };
    }
    // Locked, and read again under the lock: two first sign-ins for one account are judged one after the other.
    const user = await this.users.lock(tx, found.id);
    if (!user) throw new SsoRefusal(409, 'Your account changed during the sign-in; please sign in again.');
    const linkedSince = await this.identities.userOf(tx, identity);
    if (linkedSince !== null) return { userId: linkedSince, takenOver: false, ended: [] };
    if ((await this.identities.subjectOf(tx, user.id, identity.issuer)) !== null) {
      throw new SsoRefusal(
        403,
        `The Flagstore account for ${identity.email} is linked to another account at your sign-in provider, so this one cannot sign in ` +
          'to it. Sign in with that account, or ask an admin of your studio.',
      );
    }
    let ended: string[] = [];
    if (!user.emailVerified) {
      await this.users.takeOver(tx, user.id);
      // A reset link mailed before would set a password again.
      await this.emailTokens.spendAllOf(tx, user.id);
      ended = await this.sessionRows.endAllOf(tx, user.id);
      this.logger.log(`Single sign-on took over the unverified account ${user.id}: password removed, ${ended.length} session(s) ended`);
    }
    await this.link(tx, identity, user.id);
    return { userId: user.id, takenOver: !user.emailVerified, ended };
  }

  private async link(tx: Transaction, identity: OidcIdentity, userId: string): Promise<void> {
    if (!(await this.identities.link(tx, identity, userId))) {
      throw new SsoRefusal(409, 'Your account was being linked by another sign-in at the same moment; please sign in again.');
    }
  }

  /** A user for an invited person's first sign-in: no password (they sign in through the provider), the email verified by it. */
  private async createUser(tx: Transaction, identity: OidcIdentity): Promise<string> {
    const name = (identity.name ?? identity.email.split('@')[0]).slice(0, 100) || identity.email.slice(0, 100);
    const user = await this.users.create(tx, identity.email, name, null, true);
    if (!user) throw new SsoRefusal(409, 'Your account was being created by another sign-in at the same moment; please sign in again.');
    return user.id;
  }

  private configured(): OidcSignIn {
    if (!this.oidc) throw new SsoRefusal(404, 'Single sign-on is not configured on this service (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET).');
    return this.oidc;
  }

  /** What the person is told; the log gets the provider's or the library's words, never codes, tokens or secrets. */
  private refusal(error: unknown): SsoRefusal {
    if (error instanceof SsoRefusal) return error;
    if (!(error instanceof OidcError)) throw error;
    this.logger.warn(`Single sign-on failed (${error.reason}): ${error.detail}`);
    return new SsoRefusal(REFUSAL_STATUS[error.reason], error.message);
  }
}

/** A problem of the sign-in itself is the browser's (400, 403); one between this service and the provider is 502. */
const REFUSAL_STATUS: Record<OidcFailure, number> = {
  [OidcFailure.STATE_MISMATCH]: 400,
  [OidcFailure.PENDING_EXPIRED]: 400,
  [OidcFailure.CODE_REJECTED]: 400,
  [OidcFailure.PROVIDER_ERROR]: 403,
  [OidcFailure.EMAIL_MISSING]: 403,
  [OidcFailure.ID_TOKEN_INVALID]: 502,
  [OidcFailure.PROVIDER_UNREACHABLE]: 502,
  [OidcFailure.MISCONFIGURED]: 502,
};
