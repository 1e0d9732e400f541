import { Inject, Injectable, Logger } from '@nestjs/common';
import { IssuedSession, SessionAuthenticator } from '../auth/sessions/session-authenticator';
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
import { UsersRepository } from './users.repository';

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

/**
 * Single sign-on (README, "Single sign-on"): the OpenID Connect code flow through OidcSignIn, and what its answer
 * means here. The provider's verified email signs in the user with that email, and accepts every pending invitation
 * for it; a person without a user but with a pending invitation gets a user (without a password) made from it;
 * anyone else is refused. The session issued is the same as a password sign-in's.
 */
@Injectable()
export class SsoService {
  private readonly logger = new Logger(SsoService.name);
  private readonly oidc?: OidcSignIn;

  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly memberships: MembershipsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly sessions: SessionAuthenticator,
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
  async finish(callbackUrl: string, sealed: string | undefined): Promise<{ session: IssuedSession; returnTo: string }> {
    const oidc = this.configured();
    const pending = sealed === undefined ? null : openPending(sealed, this.secret, this.clock.now());
    if (pending === null) throw this.refusal(new OidcError(OidcFailure.STATE_MISMATCH, 'no live pending sign-in cookie'));
    let identity: OidcIdentity;
    try {
      identity = await oidc.finish(callbackUrl, pending);
    } catch (error) {
      throw this.refusal(error);
    }
    if (!identity.emailVerified) {
      throw new SsoRefusal(403, `Your sign-in provider has not verified the email ${identity.email}, so it cannot sign you in here.`);
    }
    // The provider's spelling of the email is not ours: users and invitations hold the normal form.
    const email = normalEmail(identity.email);
    if (email === null) throw new SsoRefusal(403, `Your sign-in provider gave ${identity.email}, which is not an email address Flagstore can use.`);
    const session = await this.signIn({ ...identity, email });
    return { session, returnTo: pending.returnTo };
  }

  private async signIn(identity: OidcIdentity): Promise<IssuedSession> {
    const { session, userId } = await this.transactions.run(async (tx) => {
      const invitations = await this.invitations.pendingFor(tx, identity.email, this.clock.now());
      const user = await this.users.findByEmail(tx, identity.email);
      if (!user && invitations.length === 0) {
        throw new SsoRefusal(403, `There is no Flagstore account for ${identity.email}. Ask an admin of your studio to invite you.`);
      }
      const userId = user?.id ?? (await this.createUser(tx, identity));
      for (const invitation of invitations) {
        // Already a member (joined meanwhile): the invitation stays pending, to expire or be withdrawn.
        if (await this.memberships.add(tx, invitation.organizationId, userId, invitation.role)) {
          await this.invitations.markAccepted(tx, invitation.id, userId);
        }
      }
      return { session: await this.sessions.issue(tx, userId), userId };
    });
    this.bus.publish('user', userId);
    return session;
  }

  /** A user for an invited person's first sign-in: no password (they sign in through the provider). */
  private async createUser(tx: Transaction, identity: OidcIdentity): Promise<string> {
    const name = (identity.name ?? identity.email.split('@')[0]).slice(0, 100) || identity.email.slice(0, 100);
    const user = await this.users.create(tx, identity.email, name, null);
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
