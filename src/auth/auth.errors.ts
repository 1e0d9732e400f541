import { ForbiddenException, HttpStatus, UnauthorizedException } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { RateLimitedError } from '../rate-limit/rate-limited.error';
import { Permission } from './permission';
import { Principal } from './principal';

/** Shared by the guards and the config poll's lean path, so both answer alike. */
export const AuthErrors = {
  invalidApiKey: () => new UnauthorizedException('Missing or invalid API key'),
  invalidAdminToken: () => new UnauthorizedException('A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)'),
  noAdminToken: () =>
    new UnauthorizedException('No admin token is configured: the admin API is off until the service is started with ADMIN_TOKEN set'),
  sessionEnded: () => new UnauthorizedException('The session has ended or is not valid; sign in again'),
  notSignedIn: () => new UnauthorizedException('Not signed in, or the session has ended: sign in with POST /v1/auth/login'),
  organizationRequired: (fromQuery: boolean) =>
    new ForbiddenException(
      fromQuery
        ? 'With a session, ?organizationId= must name one of your organizations'
        : 'With a session, the X-Organization-Id header must name one of your organizations',
    ),
  notAMember: () => new ForbiddenException('You are not a member of that organization'),
  csrfTokenInvalid: () =>
    new DomainError(
      HttpStatus.FORBIDDEN,
      'CSRF_TOKEN_INVALID',
      "A change made with a session needs the X-CSRF-Token header set to the session's csrfToken (from sign-in or GET /v1/auth/session)",
    ),
  keysManageNoPeople: () => new ForbiddenException('API keys never manage people or keys: this route takes a signed-in session'),
  roleTooLow: (needed: string) => new ForbiddenException(`This needs the ${needed} role in the organization`),
  missingPermission: (permission: Permission, type: Principal['type'] = 'apiKey') =>
    new ForbiddenException(type === 'apiKey' ? `The API key lacks the ${permission} permission` : `Your role lacks the ${permission} permission`),
  undeclaredPermission: () => new ForbiddenException('This route declares no permission and is closed'),
  /** `credential`: what the refused route takes (the budget counts every failed authentication of the address). */
  tooManyFailures: (limit: number, retryAfterSeconds: number, credential = 'API key') =>
    new RateLimitedError(
      `More than ${limit} requests a minute from this address had a missing or invalid ${credential}; retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
    ),
};

/** The 403 for a key or role that lacks `permission`, or null when it carries it. */
export function permissionRefusal(principal: Principal, permission: Permission): ForbiddenException | null {
  return principal.permissions.has(permission) ? null : AuthErrors.missingPermission(permission, principal.type);
}
