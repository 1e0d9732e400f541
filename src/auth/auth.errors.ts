import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { RateLimitedError } from '../rate-limit/rate-limited.error';
import { Permission } from './permission';
import { Principal } from './principal';

/** Shared by the guards and the config poll's lean path, so both answer alike. */
export const AuthErrors = {
  invalidApiKey: () => new UnauthorizedException('Missing or invalid API key'),
  invalidAdminToken: () => new UnauthorizedException('A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)'),
  noAdminToken: () =>
    new UnauthorizedException('No admin token is configured: the admin API is off until the service is started with ADMIN_TOKEN set'),
  missingPermission: (permission: Permission) => new ForbiddenException(`The API key lacks the ${permission} permission`),
  undeclaredPermission: () => new ForbiddenException('This route declares no permission and is closed'),
  /** `credential`: what the refused route takes (the budget counts every failed authentication of the address). */
  tooManyFailures: (limit: number, retryAfterSeconds: number, credential = 'API key') =>
    new RateLimitedError(
      `More than ${limit} requests a minute from this address had a missing or invalid ${credential}; retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
    ),
};

/** The 403 for a key that lacks `permission`, or null when it carries it. */
export function permissionRefusal(principal: Principal, permission: Permission): ForbiddenException | null {
  return principal.permissions.has(permission) ? null : AuthErrors.missingPermission(permission);
}
