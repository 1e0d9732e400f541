import { BaseClient, custom, CustomHttpOptionsProvider, errors, generators, Issuer, TokenSet, UserinfoResponse } from 'openid-client';
import { OidcError, OidcFailure, providerRefused } from './oidc-errors';
import { OidcPending, pendingExpired } from './oidc-pending';

/** OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, and the callback URL registered with the provider. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export interface OidcSignInOptions {
  /** Milliseconds since the epoch (the app's clock): it ages pending sign-ins. ID tokens are checked by real time. */
  clock?: () => number;
  /** How long a request to the provider may stay silent before it counts as unreachable (default 5 s). */
  httpTimeoutMs?: number;
}

/**
 * Who the provider says signed in: `issuer` and `subject` name the account at the provider for good; the email is what
 * the provider says today. The route decides what they mean.
 */
export interface OidcIdentity {
  /** The ID token's `iss`, checked by openid-client against the discovered issuer. */
  issuer: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  /** The provider's `sub`: stable for the account at this provider, unlike the email. */
  subject: string;
}

const SCOPE = 'openid email profile';
/** Difference tolerated between this host's clock and the provider's when checking an ID token's times. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** The longest returnTo kept: the whole pending sign-in must fit in a cookie. */
const MAX_RETURN_TO_LENGTH = 1024;

/** A path on this service: one leading slash (`//host` and `/\host` lead elsewhere), printable ASCII, bounded. */
export function isLocalReturnTo(returnTo: string): boolean {
  return returnTo.length <= MAX_RETURN_TO_LENGTH && /^\/(?![/\\])[\x21-\x7e]*$/.test(returnTo);
}

/**
 * The relying-party half of single sign-on (authorization code flow with PKCE S256, `state` and `nonce`) through
 * openid-client 5, which validates the ID token: signature against the provider's JWKS, iss, aud, nonce, expiry.
 *
 * The provider's metadata is discovered on first use and kept; a failed discovery is tried again by the next call,
 * so a provider that was down at boot does not disable sign-in until a restart. Whatever fails between this service
 * and the provider is an OidcError.
 */
export class OidcSignIn {
  private readonly clock: () => number;
  private readonly httpOptions: CustomHttpOptionsProvider;
  private client?: Promise<BaseClient>;

  constructor(
    private readonly settings: OidcSettings,
    options: OidcSignInOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    const timeout = options.httpTimeoutMs ?? 5000;
    this.httpOptions = (_url, httpOptions) => ({ ...httpOptions, timeout });
  }

  /** The provider's authorization URL to send the browser to, and the pending sign-in to keep for its callback. */
  async start(returnTo: string): Promise<{ url: string; pending: OidcPending }> {
    if (!isLocalReturnTo(returnTo)) throw new TypeError('returnTo must be a path on this service (check it with isLocalReturnTo)');
    const client = await this.discovered();
    const [state, nonce, codeVerifier] = [generators.state(), generators.nonce(), generators.codeVerifier()];
    const url = client.authorizationUrl({
      scope: SCOPE,
      state,
      nonce,
      code_challenge: generators.codeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, pending: { state, nonce, codeVerifier, returnTo, createdAt: this.clock() } };
  }

  /**
   * Completes the sign-in from the callback's URL (its path and query are enough): checks the pending sign-in's age
   * and state, exchanges the code with the verifier, validates the ID token with the nonce, and reads the email from
   * the ID token, or from the userinfo endpoint when the provider keeps it there (OpenID Connect Core 5.4).
   */
  async finish(callbackUrl: string, pending: OidcPending): Promise<OidcIdentity> {
    if (pendingExpired(pending, this.clock())) throw new OidcError(OidcFailure.PENDING_EXPIRED, 'pending sign-in older than 10 minutes');
    const client = await this.discovered();
    const params = client.callbackParams(callbackUrl);
    // Before anything else: an answer that belongs to no sign-in of this browser is not read any further.
    if (params.state !== pending.state) throw new OidcError(OidcFailure.STATE_MISMATCH, 'the callback state is not the pending one');
    if (params.error !== undefined || params.code === undefined) throw providerRefused(params.error, params.error_description);

    let tokens: TokenSet;
    try {
      tokens = await client.callback(this.settings.redirectUri, params, {
        response_type: 'code',
        state: pending.state,
        nonce: pending.nonce,
        code_verifier: pending.codeVerifier,
      });
    } catch (error) {
      throw failure(error);
    }
    const idClaims = tokens.claims();
    const claims = typeof idClaims.email === 'string' ? idClaims : await this.userinfo(client, tokens);
    if (typeof claims.email !== 'string' || claims.email === '') {
      throw new OidcError(OidcFailure.EMAIL_MISSING, `no email claim for subject ${idClaims.sub}`);
    }
    return {
      email: claims.email,
      // Amazon Cognito's userinfo sends it as a string.
      emailVerified: claims.email_verified === true || (claims.email_verified as unknown) === 'true',
      name: typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim() : undefined,
      subject: idClaims.sub,
      issuer: idClaims.iss,
    };
  }

  private discovered(): Promise<BaseClient> {
    this.client ??= this.discover().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async discover(): Promise<BaseClient> {
    // Issuer.discover reads its HTTP options from the class it is called on: a class of this instance's own keeps
    // the timeout to this instance.
    const httpOptions = this.httpOptions;
    const TimedIssuer = class extends Issuer<BaseClient> {
      static override [custom.http_options] = httpOptions;
    };
    let issuer: Issuer<BaseClient>;
    try {
      issuer = await TimedIssuer.discover(this.settings.issuer);
    } catch (error) {
      throw new OidcError(OidcFailure.PROVIDER_UNREACHABLE, `discovery of ${this.settings.issuer} failed: ${describe(error)}`);
    }
    // OpenID Connect Discovery 1.0 section 4.3; ID tokens are checked against the discovered name.
    if (issuer.metadata.issuer !== this.settings.issuer) {
      throw new OidcError(
        OidcFailure.MISCONFIGURED,
        `OIDC_ISSUER is ${this.settings.issuer} but the provider names itself ${issuer.metadata.issuer}`,
      );
    }
    issuer[custom.http_options] = httpOptions; // its JWKS requests
    const client = new issuer.Client({
      client_id: this.settings.clientId,
      client_secret: this.settings.clientSecret,
      redirect_uris: [this.settings.redirectUri],
      response_types: ['code'],
    });
    client[custom.http_options] = httpOptions;
    client[custom.clock_tolerance] = CLOCK_TOLERANCE_SECONDS;
    return client;
  }

  private async userinfo(client: BaseClient, tokens: TokenSet): Promise<UserinfoResponse> {
    try {
      // Given the token set, openid-client also checks that the answer is about the ID token's subject.
      return await client.userinfo(tokens);
    } catch (error) {
      throw failure(error);
    }
  }
}

/** An error of the code exchange, the ID token's validation or the userinfo request, as the route's reason. */
function failure(error: unknown): OidcError {
  const detail = describe(error);
  if (error instanceof errors.OPError) {
    if (error.error === 'invalid_grant') return new OidcError(OidcFailure.CODE_REJECTED, detail);
    if (error.error === 'invalid_client' || error.error === 'unauthorized_client') return new OidcError(OidcFailure.MISCONFIGURED, detail);
    const status = (error as { response?: { statusCode?: number } }).response?.statusCode ?? 0;
    // A standard error code from a provider that works; anything else ("expected 200 OK, got: 502") is a failing one.
    if (status < 500 && /^[a-z_]+$/.test(error.error ?? '')) return new OidcError(OidcFailure.PROVIDER_ERROR, detail);
    return new OidcError(OidcFailure.PROVIDER_UNREACHABLE, detail);
  }
  if (unreachable(error)) return new OidcError(OidcFailure.PROVIDER_UNREACHABLE, detail);
  // openid-client throws a TypeError for a token response without an ID token.
  if (error instanceof errors.RPError || (isError(error) && error.name === 'TypeError' && error.message.includes('id_token'))) {
    return new OidcError(OidcFailure.ID_TOKEN_INVALID, detail);
  }
  throw error;
}

/**
 * The request failed below OAuth: openid-client's own timeout, a socket or TLS error (they carry a `code`), or an
 * answer that is not JSON (a SyntaxError to which openid-client attaches the response).
 */
function unreachable(error: unknown): boolean {
  if (error instanceof errors.RPError) return error.message.startsWith('outgoing request timed out');
  if (!isError(error)) return false;
  return typeof (error as NodeJS.ErrnoException).code === 'string' || (error.name === 'SyntaxError' && 'response' in error);
}

/**
 * Told by shape, not `instanceof Error`: Node's own errors (a refused connection) come from another realm than
 * code that runs in a VM context, as under Jest.
 */
function isError(error: unknown): error is Error {
  return typeof error === 'object' && error !== null && typeof (error as Error).name === 'string' && typeof (error as Error).message === 'string';
}

/** The error's message alone: openid-client's errors also carry codes, verifiers and tokens as properties. */
function describe(error: unknown): string {
  return isError(error) ? `${error.name}: ${error.message}` : String(error);
}
