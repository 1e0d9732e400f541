import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { constantTimeEqual } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthErrors } from './auth.errors';
import { Principal, SignedInUser } from './principal';
import { LiveSession, SessionAuthenticator } from './sessions/session-authenticator';
import { cookieValue, SESSION_COOKIE } from './sessions/session-token';

/** How a route of one organization takes its caller. */
export interface PrincipalOptions {
  /** OFREP: the key may also come as `X-API-Key: <key>`. */
  apiKeyHeader?: boolean;
  /** False on routes outside base_url (OFREP): an API key only, a session cookie is not looked at. */
  sessions?: boolean;
  /**
   * The streams (config, events): a browser's EventSource names the organization with `?organizationId=` (it sends no
   * headers), and opening one, which the browser repeats by itself, is not a use of the session (a forgotten tab goes idle).
   */
  stream?: boolean;
}

/** Methods that change nothing: the only ones a session may send without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a 429 for too many failed authentications calls the credential a route takes. */
const KEY_OR_SESSION = 'API key or session';

/**
 * Turns a request into who is calling, one way for every route, guard and lean path (the config poll, the stream):
 * - a bearer key (or OFREP's `X-API-Key`) is judged by the key alone (ApiKeyAuthenticator), whatever else it carries;
 * - without one, the session cookie with `X-Organization-Id` naming one of the user's organizations (the role's
 *   permissions), and on a change the session's `X-CSRF-Token`.
 * A credential that turns out bad (no key, an unknown key, a dead session) spends its address's budget of failed
 * authentications (AuthFailureLimiter); a good one passes whatever the address did.
 */
@Injectable()
export class RequestAuthenticator {
  constructor(
    private readonly keys: ApiKeyAuthenticator,
    private readonly sessions: SessionAuthenticator,
    readonly failures: AuthFailureLimiter,
  ) {}

  /** The caller of a route of one organization: synchronous for a key already in the index (the poll's steady path). */
  principal(request: IncomingMessage, options: PrincipalOptions = {}): Principal | Promise<Principal> {
    const authorization = credentialOf(request, options.apiKeyHeader === true);
    if (authorization === undefined && options.sessions !== false) {
      const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
      if (token !== undefined) return this.sessionPrincipal(request, token, options.stream === true);
    }
    const cached = this.keys.cached(authorization);
    if (cached) return cached;
    return countedAuthentication(this.failures, request, () => this.keys.authenticate(authorization), AuthErrors.invalidApiKey);
  }

  /** The signed-in user of a route that belongs to no organization (the session, logout, a password change). */
  async signedIn(request: IncomingMessage): Promise<SignedInUser> {
    const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const session = await countedAuthentication(
      this.failures,
      request,
      () => (token === undefined ? null : this.sessions.session(token)),
      AuthErrors.notSignedIn,
      'session',
    );
    checkCsrf(request, session);
    return { userId: session.userId, sessionId: session.sessionId, csrfToken: session.csrfToken };
  }

  private async sessionPrincipal(request: IncomingMessage, token: string, stream: boolean): Promise<Principal> {
    const session = await countedAuthentication(
      this.failures,
      request,
      () => this.sessions.session(token, { use: !stream }),
      AuthErrors.sessionEnded,
      KEY_OR_SESSION,
    );
    checkCsrf(request, session);
    const organizationId = stream ? queryOrganization(request) : request.headers['x-organization-id'];
    if (typeof organizationId !== 'string' || organizationId === '') throw AuthErrors.organizationRequired(stream);
    const principal = isUUID(organizationId) ? await this.sessions.principal(session, token, organizationId) : null;
    if (principal === null) throw AuthErrors.notAMember();
    return principal;
  }
}

/**
 * A lookup of a credential (an API key's principal, a session, or the admin token's match), and the request address's
 * budget of failed authentications: a credential that finds what it is looked up for passes, whatever the address did
 * before; one that does not is refused, with 429 once the address has spent its budget (its message naming
 * `credential`, "API key" by default), else with `refusal` (and counted).
 */
export async function countedAuthentication<T>(
  failures: AuthFailureLimiter,
  request: IncomingMessage,
  lookUp: () => Promise<T | null> | T | null,
  refusal: () => Error,
  credential?: string,
): Promise<T> {
  const found = await lookUp();
  if (found) return found;
  const address = failures.addressOf(request);
  const wait = failures.retryAfterSeconds(address);
  if (wait > 0) throw AuthErrors.tooManyFailures(failures.limit, wait, credential);
  failures.record(address);
  throw refusal();
}

/** A change made with a session must carry the session's CSRF token: a page of another site cannot read it. */
function checkCsrf(request: IncomingMessage, session: LiveSession): void {
  if (SAFE_METHODS.has(request.method ?? 'GET')) return;
  const given = request.headers['x-csrf-token'];
  if (typeof given !== 'string' || !constantTimeEqual(given, session.csrfToken)) throw AuthErrors.csrfTokenInvalid();
}

/** The bearer header, or on routes that take it (OFREP) `X-API-Key` as if it were one. */
function credentialOf(request: IncomingMessage, apiKeyHeader: boolean): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined || !apiKeyHeader) return authorization;
  const key = request.headers['x-api-key'];
  return typeof key === 'string' ? `Bearer ${key}` : undefined;
}

function queryOrganization(request: IncomingMessage): string | null {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? null : new URLSearchParams(url.slice(query + 1)).get('organizationId');
}
