import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata, Type } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCookieAuth,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Access, ACCESS_KEY } from '../http/access';
import { Permission } from './permission';
import { AuthenticatedRequest, Principal, SignedInUser } from './principal';
import { Role } from './roles';

export const PERMISSION_KEY = 'auth:permission';
export const API_KEY_HEADER_KEY = 'auth:api-key-header';
export const API_KEY_ONLY_KEY = 'auth:api-key-only';
export const ROLE_KEY = 'auth:role';

export const API_KEY_SECURITY = 'apiKey';
/** OFREP's second way to send the key: `X-API-Key: <key>`. */
export const API_KEY_HEADER_SECURITY = 'apiKeyHeader';
export const ADMIN_SECURITY = 'adminToken';
/** The session cookie of a signed-in user (with X-Organization-Id on an organization's routes, X-CSRF-Token on changes). */
export const SESSION_SECURITY = 'session';

/** How a route's 401 and 403 are documented; the defaults are the flag API's. */
export interface AuthErrorDocs {
  /** The error body (the storage routes answer in their own shape). */
  type?: Type<unknown>;
  unauthorized?: string;
  /** When the route refuses more than a missing permission with 403 (a locked flag, say). */
  forbidden?: string;
  /** When the route counts against a budget of its own (see RateLimit). */
  rateLimited?: string;
  /** A direct flag write the organization's review setting guards: its 403 also means REVIEW_REQUIRED. */
  reviewGuarded?: boolean;
}

/** How a guarded write's 403 says REVIEW_REQUIRED (decisions.md, "Change requests (turn 5)"). */
export const REVIEW_REQUIRED_DOC =
  'REVIEW_REQUIRED: the organization requires review of flag changes; propose the change with POST /v1/change-requests ' +
  '(only an API key with FLAGS_WRITE_UNREVIEWED writes directly there). That body also carries `code: "REVIEW_REQUIRED"`';

/** The `Retry-After` header a documented 429 carries. */
export const RETRY_AFTER = { 'Retry-After': { description: 'Seconds until the request may be sent again', schema: { type: 'integer' } } };

/**
 * The route needs an API key carrying this permission; also documents bearer auth, 401 and 403. A route
 * documents those two statuses here only: Swagger joins two descriptions of one status into one.
 */
export function RequirePermission(permission: Permission, docs: AuthErrorDocs = {}) {
  const type = docs.type ?? ApiErrorDto;
  return applyDecorators(
    SetMetadata(PERMISSION_KEY, permission),
    ApiBearerAuth(API_KEY_SECURITY),
    ApiCookieAuth(SESSION_SECURITY),
    ApiUnauthorizedResponse({ type, description: docs.unauthorized ?? 'Missing, unknown or revoked API key, or a session that has ended' }),
    ApiForbiddenResponse({
      type,
      description:
        (docs.forbidden ??
          `The API key (or the session's role) lacks ${permission}; with a session: no X-Organization-Id of one of your organizations, or a change without the session's X-CSRF-Token (CSRF_TOKEN_INVALID)`) +
        (docs.reviewGuarded ? `; ${REVIEW_REQUIRED_DOC}` : ''),
    }),
    ApiTooManyRequestsResponse({
      type,
      headers: RETRY_AFTER,
      description:
        docs.rateLimited ??
        'RATE_LIMITED: more than API_RATE_LIMIT_PER_MINUTE requests a minute with this key, or more than AUTH_FAILURES_PER_MINUTE requests without a valid key from this address',
    }),
  );
}

/**
 * A route of an organization's people and keys (README, "People and sessions"): a signed-in member with at least
 * `role`, never an API key (403: keys never manage people or keys).
 */
export function MemberRoute(role: Role, docs: { forbidden: string }) {
  return applyDecorators(
    SetMetadata(ROLE_KEY, role),
    ApiCookieAuth(SESSION_SECURITY),
    ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'Not signed in, or the session has ended' }),
    ApiForbiddenResponse({ type: ApiErrorDto, description: docs.forbidden }),
    ApiTooManyRequestsResponse({
      type: ApiErrorDto,
      headers: RETRY_AFTER,
      description:
        'RATE_LIMITED: more than API_RATE_LIMIT_PER_MINUTE requests a minute of this user, or too many failed authentications from this address',
    }),
  );
}

/**
 * The route belongs to the signed-in user rather than to an organization (the session, logout, a password change):
 * it takes the session cookie alone, and X-CSRF-Token on a change.
 */
export function SignedIn() {
  return applyDecorators(
    SetMetadata(ACCESS_KEY, 'signedIn' satisfies Access),
    ApiCookieAuth(SESSION_SECURITY),
    ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'Not signed in, or the session has ended' }),
    ApiTooManyRequestsResponse({
      type: ApiErrorDto,
      headers: RETRY_AFTER,
      description: 'RATE_LIMITED: more than AUTH_FAILURES_PER_MINUTE requests a minute from this address had a missing or dead session',
    }),
  );
}

/** The route takes an API key only, never a session (OFREP: it is not under base_url). */
export const ApiKeyOnly = () => SetMetadata(API_KEY_ONLY_KEY, true);

/** The route also takes the key as `X-API-Key: <key>` (OFREP's alternative to the bearer header). */
export function AcceptsApiKeyHeader() {
  return applyDecorators(SetMetadata(API_KEY_HEADER_KEY, true), ApiSecurity(API_KEY_HEADER_SECURITY));
}

/** The route is authorised by `Authorization: Bearer $ADMIN_TOKEN` instead of an API key. */
export function AdminOnly() {
  return applyDecorators(
    SetMetadata(ACCESS_KEY, 'admin' satisfies Access),
    ApiBearerAuth(ADMIN_SECURITY),
    ApiUnauthorizedResponse({
      type: ApiErrorDto,
      description: 'Missing or wrong admin token, or no ADMIN_TOKEN is configured (the message says which: then the admin API is off)',
    }),
    ApiBadRequestResponse({ type: ApiErrorDto, description: 'Validation failed; the message names the field' }),
    ApiTooManyRequestsResponse({
      type: ApiErrorDto,
      headers: RETRY_AFTER,
      description:
        'RATE_LIMITED: more than AUTH_FAILURES_PER_MINUTE requests a minute from this address had a missing or invalid API key or admin token. The right admin token is never refused',
    }),
  );
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route that does not authenticate an API key or a session');
  return principal;
});

/** The signed-in user of a @SignedIn() route. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): SignedInUser => {
  const signedIn = context.switchToHttp().getRequest<AuthenticatedRequest>().signedIn;
  if (!signedIn) throw new Error('CurrentUser used on a route that does not authenticate a session');
  return signedIn;
});
