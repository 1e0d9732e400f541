import type { IncomingMessage } from 'node:http';
import { CanActivate, ExecutionContext, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Permission } from './permission';
import { bearerToken, constantTimeEqual } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { Access, ACCESS_KEY } from '../http/access';
import { API_KEY_HEADER_KEY, PERMISSION_KEY } from './auth.decorators';
import { AuthErrors, permissionRefusal } from './auth.errors';
import { AuthenticatedRequest, Principal } from './principal';

/**
 * Global and deny-by-default: a route is public only if it says so, admin routes need the admin token,
 * and every other route needs a valid API key.
 */
@Injectable()
export class AuthGuard implements CanActivate, OnApplicationBootstrap {
  private readonly logger = new Logger(AuthGuard.name);
  private readonly adminRefusal: () => Error;

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly failures: AuthFailureLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.adminRefusal = config.adminToken === undefined ? AuthErrors.noAdminToken : AuthErrors.invalidAdminToken;
  }

  /** A first start without ADMIN_TOKEN says why every admin call will answer 401. */
  onApplicationBootstrap(): void {
    if (this.config.adminToken === undefined) {
      this.logger.log(
        'ADMIN_TOKEN is not set: the admin API is off and every admin call answers 401. Set ADMIN_TOKEN (32 or more random characters) to use it; the CLI works without it',
      );
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, [context.getHandler(), context.getClass()]);
    if (access === 'public') return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (access === 'admin') {
      // Wrong admin tokens spend the address's budget of failed authentications, as bad API keys do: no address
      // may guess at the token freely, and the right token is never refused.
      await countedAuthentication(this.failures, request, () => this.adminTokenMatches(request), this.adminRefusal, ADMIN_CREDENTIALS);
      return true;
    }

    const apiKeyHeader = this.reflector.get<boolean | undefined>(API_KEY_HEADER_KEY, context.getHandler()) === true;
    request.principal = await authenticateOrCount(this.authenticator, this.failures, request, apiKeyHeader);
    return true;
  }

  private adminTokenMatches(request: IncomingMessage): typeof ADMIN | null {
    const token = bearerToken(request.headers.authorization);
    const adminToken = this.config.adminToken;
    return adminToken !== undefined && token !== undefined && constantTimeEqual(token, adminToken) ? ADMIN : null;
  }
}

/**
 * The API key's principal, for the guard and the config poll's lean path alike: a key in the index answers at once;
 * any other credential is looked up (ApiKeyAuthenticator: no database round trip of its own), and held to its
 * address's budget of failed authentications only if it turns out bad.
 */
export function authenticateOrCount(
  authenticator: ApiKeyAuthenticator,
  failures: AuthFailureLimiter,
  request: IncomingMessage,
  apiKeyHeader = false,
): Principal | Promise<Principal> {
  const authorization = credentialOf(request, apiKeyHeader);
  const cached = authenticator.cached(authorization);
  if (cached) return cached;
  return countedAuthentication(failures, request, () => authenticator.authenticate(authorization), AuthErrors.invalidApiKey);
}

/**
 * A lookup of a credential (an API key's principal, or the admin token's match), and the request address's budget of
 * failed authentications: a credential that finds what it is looked up for passes, whatever the address did before;
 * one that does not is refused, with 429 once the address has spent its budget (its message naming `credential`,
 * "API key" by default), else with `refusal` (and counted).
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

/** Answered by the admin routes' lookup when the bearer token is the admin token. */
const ADMIN = true;

/** What the admin routes' 429 says was missing or invalid: the budget is one per address, API keys included. */
const ADMIN_CREDENTIALS = 'API key or admin token';

/** The bearer header, or on routes that take it (OFREP) `X-API-Key` as if it were one. */
function credentialOf(request: IncomingMessage, apiKeyHeader: boolean): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined || !apiKeyHeader) return authorization;
  const key = request.headers['x-api-key'];
  return typeof key === 'string' ? `Bearer ${key}` : undefined;
}

/** Runs after AuthGuard: an API-key route must declare its permission, and the key must carry it. */
@Injectable()
export class PermissionGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!request.principal) return true; // public or admin route
    const permission = this.reflector.get<Permission | undefined>(PERMISSION_KEY, context.getHandler());
    if (!permission) throw AuthErrors.undeclaredPermission();
    const refusal = permissionRefusal(request.principal, permission);
    if (refusal) throw refusal;
    return true;
  }
}
