/** Why a single sign-on did not complete: the route chooses its answer (and what it logs) by these. */
export enum OidcFailure {
  /** The callback's `state` is not the one this browser's pending sign-in holds (forged, or another tab's). */
  STATE_MISMATCH = 'STATE_MISMATCH',
  /** The provider answered the callback with an error (error=access_denied when the person cancels), or no code. */
  PROVIDER_ERROR = 'PROVIDER_ERROR',
  /** The token endpoint refused the code: expired, already used, or issued for another verifier or redirect URI. */
  CODE_REJECTED = 'CODE_REJECTED',
  /** The ID token (or the userinfo answer) failed validation: signature, iss, aud, nonce, expiry, subject. */
  ID_TOKEN_INVALID = 'ID_TOKEN_INVALID',
  /** The pending sign-in is older than 10 minutes. */
  PENDING_EXPIRED = 'PENDING_EXPIRED',
  /** Discovery or a later request failed below OAuth: refused, timed out, a 5xx, or not what the protocol answers. */
  PROVIDER_UNREACHABLE = 'PROVIDER_UNREACHABLE',
  /**
   * The provider does not know this service as configured: it refused the client's id or secret, or names itself
   * otherwise than OIDC_ISSUER. Only an administrator can fix it.
   */
  MISCONFIGURED = 'MISCONFIGURED',
  /** The provider shared no email address for the account (the `email` scope was not granted, or it has none). */
  EMAIL_MISSING = 'EMAIL_MISSING',
}

const MESSAGES: Record<OidcFailure, string> = {
  [OidcFailure.STATE_MISMATCH]: 'This sign-in was not started from this browser, or was started again since; please sign in again.',
  [OidcFailure.PROVIDER_ERROR]: 'The sign-in provider did not sign you in.',
  [OidcFailure.CODE_REJECTED]: 'The sign-in provider no longer accepts this sign-in (it expired or was already used); please sign in again.',
  [OidcFailure.ID_TOKEN_INVALID]: "The sign-in provider's answer could not be verified; please sign in again.",
  [OidcFailure.PENDING_EXPIRED]: 'This sign-in took longer than 10 minutes; please sign in again.',
  [OidcFailure.PROVIDER_UNREACHABLE]: 'The sign-in provider could not be reached or did not answer as expected; please try again later.',
  [OidcFailure.MISCONFIGURED]: 'Single sign-on is not set up correctly on this service; an administrator must check its OIDC settings.',
  [OidcFailure.EMAIL_MISSING]: 'The sign-in provider did not share an email address for this account.',
};

/**
 * A single sign-on that did not complete. `message` may be shown to the person signing in: it never holds a code,
 * a token, a verifier or a secret. `detail` is for the log: the provider's or the library's own words, kept as text
 * because openid-client's error objects carry the callback's parameters, the PKCE verifier and the ID token as
 * properties, which a logger serializing the error would write out.
 */
export class OidcError extends Error {
  override readonly name = 'OidcError';

  constructor(
    readonly reason: OidcFailure,
    readonly detail: string,
    message = MESSAGES[reason],
  ) {
    super(message);
  }
}

/** OAuth error codes are short ASCII words (RFC 6749 appendix A.7); anything else from a callback is not repeated. */
const ERROR_CODE = /^[a-z_]{1,64}$/;

/** The provider's refusal from the callback, naming its error code (such as access_denied) when it is one. */
export function providerRefused(error: string | undefined, description: string | undefined): OidcError {
  const code = error !== undefined && ERROR_CODE.test(error) ? error : undefined;
  const message = code ? `The sign-in provider did not sign you in (${code}).` : undefined;
  return new OidcError(OidcFailure.PROVIDER_ERROR, [error ?? 'no code in the callback', description].filter(Boolean).join(': '), message);
}
