import * as openid from 'openid-client';
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
 * openid-client 6, which validates the ID token: signature against the provider's JWKS, iss, aud, nonce, expiry.
 *
 * The provider's metadata is discovered on first use and kept; a failed discovery is tried again by the next call,
 * so a provider that was down at boot does not disable sign-in until a restart. Whatever fails between this service
 * and the provider is an OidcError.
 */
export class OidcSignIn {
  private readonly clock: () => number;
  private readonly fetch: openid.CustomFetch;
  private configuration?: Promise<openid.Configuration>;

  constructor(
    private readonly settings: OidcSettings,
    options: OidcSignInOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.fetch = timedFetch(options.httpTimeoutMs ?? 5000);
  }

  /** The provider's authorization URL to send the browser to, and the pending sign-in to keep for its callback. */
  async start(returnTo: string): Promise<{ url: string; pending: OidcPending }> {
    if (!isLocalReturnTo(returnTo)) throw new TypeError('returnTo must be a path on this service (check it with isLocalReturnTo)');
    const configuration = await this.discovered();
    const [state, nonce, codeVerifier] = [openid.randomState(), openid.randomNonce(), openid.randomPKCECodeVerifier()];
    const url = openid.buildAuthorizationUrl(configuration, {
      redirect_uri: this.settings.redirectUri,
      scope: SCOPE,
      state,
      nonce,
      code_challenge: await openid.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending: { state, nonce, codeVerifier, returnTo, createdAt: this.clock() } };
  }

  /**
   * Completes the sign-in from the callback's URL (its path and query are enough): checks the pending sign-in's age
   * and state, exchanges the code with the verifier, validates the ID token with the nonce, and reads the email from
   * the ID token, or from the userinfo endpoint when the provider keeps it there (OpenID Connect Core 5.4).
   */
  async finish(callbackUrl: string, pending: OidcPending): Promise<OidcIdentity> {
    if (pendingExpired(pending, this.clock())) throw new OidcError(OidcFailure.PENDING_EXPIRED, 'pending sign-in older than 10 minutes');
    const configuration = await this.discovered();
    // The callback's path and query on the registered redirect URI's origin: the token request names that URI.
    const callback = new URL(callbackUrl, this.settings.redirectUri);
    const params = callback.searchParams;
    // Before anything else: an answer that belongs to no sign-in of this browser is not read any further.
    if (params.get('state') !== pending.state) throw new OidcError(OidcFailure.STATE_MISMATCH, 'the callback state is not the pending one');
    if (params.has('error') || !params.has('code')) {
      throw providerRefused(params.get('error') ?? undefined, params.get('error_description') ?? undefined);
    }

    let tokens: openid.TokenEndpointResponse & openid.TokenEndpointResponseHelpers;
    try {
      tokens = await openid.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw failure(error);
    }
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw new OidcError(OidcFailure.ID_TOKEN_INVALID, 'the token response holds no ID token');
    const claims = typeof idClaims.email === 'string' ? idClaims : await this.userinfo(configuration, tokens.access_token, idClaims.sub);
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

  private discovered(): Promise<openid.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  private async discover(): Promise<openid.Configuration> {
    const issuer = this.settings.issuer;
    let configuration: openid.Configuration;
    try {
      configuration = await openid.discovery(
        new URL(issuer),
        this.settings.clientId,
        {
          client_secret: this.settings.clientSecret,
          redirect_uris: [this.settings.redirectUri],
          response_types: ['code'],
          [openid.clockTolerance]: CLOCK_TOLERANCE_SECONDS,
        },
        // What openid-client 5 used, and what providers register a confidential client with by default.
        openid.ClientSecretBasic(this.settings.clientSecret),
        // An http: issuer is the operator's choice (a provider on a private network, the tests' own).
        { [openid.customFetch]: this.fetch, execute: new URL(issuer).protocol === 'http:' ? [openid.allowInsecureRequests] : [] },
      );
    } catch (error) {
      const named = discoveredIssuer(error);
      if (named !== undefined) throw misnamed(issuer, named);
      throw new OidcError(OidcFailure.PROVIDER_UNREACHABLE, `discovery of ${issuer} failed: ${describe(error)}`);
    }
    // OpenID Connect Discovery 1.0 section 4.3, compared as written (openid-client compares URLs, so `https://id/`
    // passes for `https://id`); ID tokens are checked against the discovered name.
    const named = configuration.serverMetadata().issuer;
    if (named !== issuer) throw misnamed(issuer, named);
    return configuration;
  }

  private async userinfo(configuration: openid.Configuration, accessToken: string, subject: string): Promise<openid.UserInfoResponse> {
    try {
      // Given the ID token's subject, openid-client also checks that the answer is about it.
      return await openid.fetchUserInfo(configuration, accessToken, subject);
    } catch (error) {
      throw failure(error);
    }
  }
}

function misnamed(configured: string, named: string): OidcError {
  return new OidcError(OidcFailure.MISCONFIGURED, `OIDC_ISSUER is ${configured} but the provider names itself ${named}`);
}

/** The issuer a discovery document named, when openid-client refused it for not being the configured one. */
function discoveredIssuer(error: unknown): string | undefined {
  if (!(error instanceof openid.ClientError) || error.code !== 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return undefined;
  const cause = error.cause as { attribute?: unknown; body?: { issuer?: unknown } } | undefined;
  return cause?.attribute === 'issuer' && typeof cause.body?.issuer === 'string' ? cause.body.issuer : undefined;
}

/** A request to the provider that stayed silent for `timeoutMs`. */
class ProviderTimeout extends Error {
  override readonly name = 'ProviderTimeout';
}

/** fetch with a deadline of its own per request, failing with a ProviderTimeout that names it. */
function timedFetch(timeoutMs: number): openid.CustomFetch {
  return async (url, options) => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new ProviderTimeout(`outgoing request timed out after ${timeoutMs}ms`)), timeoutMs);
    try {
      const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
      return await fetch(url, { ...options, signal } as RequestInit);
    } catch (error) {
      throw deadline.signal.aborted ? deadline.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** OAuth error codes (RFC 6749 section 5.2) that say the provider does not know this client as configured. */
const CLIENT_REFUSED = new Set(['invalid_client', 'unauthorized_client']);

/** An error of the code exchange, the ID token's validation or the userinfo request, as the route's reason. */
function failure(error: unknown): OidcError {
  const detail = describe(error);
  const refusal = oauthRefusal(error);
  if (refusal !== undefined) {
    if (refusal.code === 'invalid_grant') return new OidcError(OidcFailure.CODE_REJECTED, detail);
    if (CLIENT_REFUSED.has(refusal.code)) return new OidcError(OidcFailure.MISCONFIGURED, detail);
    // A standard error code from a provider that works; anything else is a failing one.
    if (refusal.status < 500 && /^[a-z_]+$/.test(refusal.code)) return new OidcError(OidcFailure.PROVIDER_ERROR, detail);
    return new OidcError(OidcFailure.PROVIDER_UNREACHABLE, detail);
  }
  if (unreachable(error)) return new OidcError(OidcFailure.PROVIDER_UNREACHABLE, detail);
  if (error instanceof openid.ClientError) return new OidcError(OidcFailure.ID_TOKEN_INVALID, detail);
  throw error;
}

/** The provider's OAuth error answer (a JSON error body, or a WWW-Authenticate challenge on a 401), if it is one. */
function oauthRefusal(error: unknown): { code: string; status: number } | undefined {
  if (error instanceof openid.ResponseBodyError) return { code: error.error, status: error.status };
  if (error instanceof openid.WWWAuthenticateChallengeError) {
    const code = error.cause.map((challenge) => challenge.parameters.error).find((value) => value !== undefined);
    return { code: code ?? '', status: error.status };
  }
  return undefined;
}

/** openid-client's codes for an answer that is not what the protocol answers: a failing provider, not a bad token. */
const NOT_THE_PROTOCOL = new Set(['OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON', 'OAUTH_PARSE_ERROR', 'OAUTH_TIMEOUT']);

/**
 * The request failed below OAuth: this service's own timeout, a socket or TLS error (fetch's TypeError, whose cause
 * carries the system's code, such as ECONNREFUSED), or an answer that is not what the protocol answers. Looked for
 * along the error's causes: openid-client wraps what it does not recognise (under Jest, fetch's TypeError comes from
 * another realm) in a ClientError of its own.
 */
function unreachable(error: unknown): boolean {
  return causes(error).some(
    (cause) =>
      cause instanceof ProviderTimeout ||
      (cause instanceof openid.ClientError && NOT_THE_PROTOCOL.has(cause.code ?? '')) ||
      (isError(cause) && cause.name === 'TypeError' && cause.message === 'fetch failed') ||
      (isError(cause) && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(String((cause as NodeJS.ErrnoException).code))),
  );
}

/** The error and its causes, outermost first (a few levels: enough for fetch inside openid-client). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let cause = error; cause !== undefined && chain.length < 5; cause = isError(cause) ? cause.cause : undefined) chain.push(cause);
  return chain;
}

/**
 * Told by shape, not `instanceof Error`: Node's own errors (a refused connection) come from another realm than
 * code that runs in a VM context, as under Jest.
 */
function isError(error: unknown): error is Error {
  return typeof error === 'object' && error !== null && typeof (error as Error).name === 'string' && typeof (error as Error).message === 'string';
}

/**
 * The error's message and its causes' messages, alone: openid-client's errors also carry response bodies, codes,
 * verifiers and tokens as properties.
 */
function describe(error: unknown): string {
  if (!isError(error)) return String(error);
  const because = causes(error.cause)
    .filter(isError)
    .map((cause) => ` (${cause.message})`);
  return `${error.name}: ${error.message}${because.join('')}`;
}
