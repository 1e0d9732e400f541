import type { IncomingMessage } from 'node:http';
import { CanActivate, ExecutionContext, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Permission } from './permission';
import { bearerToken, constantTimeEqual } from './api-key';
import { Access, ACCESS_KEY } from '../http/access';
import { API_KEY_HEADER_KEY, API_KEY_ONLY_KEY, PERMISSION_KEY, ROLE_KEY } from './auth.decorators';
import { AuthErrors, permissionRefusal } from './auth.errors';
import { AuthenticatedRequest } from './principal';
import { countedAuthentication, RequestAuthenticator } from './request-authenticator';
import { Role, roleAtLeast } from './roles';

/**
 * Global and deny-by-default: a route is public only if it says so, admin routes need the admin token (never a
 * session), the signed-in user's own routes a session, and every other route an API key or a session in one of the
 * user's organizations (RequestAuthenticator).
 */
@Injectable()
export class AuthGuard implements CanActivate, OnApplicationBootstrap {
  private readonly logger = new Logger(AuthGuard.name);
  private readonly adminRefusal: () => Error;

  constructor(
    private readonly reflector: Reflector,
    private readonly requests: RequestAuthenticator,
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
      const admin = () => this.adminTokenMatches(request);
      await countedAuthentication(this.requests.failures, request, admin, this.adminRefusal, ADMIN_CREDENTIALS);
      return true;
    }
    if (access === 'signedIn') {
      request.signedIn = await this.requests.signedIn(request);
      return true;
    }

    const handler = context.getHandler();
    const apiKeyOnly = this.reflector.getAllAndOverride<boolean | undefined>(API_KEY_ONLY_KEY, [handler, context.getClass()]) === true;
    const apiKeyHeader = this.reflector.get<boolean | undefined>(API_KEY_HEADER_KEY, handler) === true;
    request.principal = await this.requests.principal(request, { apiKeyHeader, sessions: !apiKeyOnly });
    return true;
  }

  private adminTokenMatches(request: IncomingMessage): typeof ADMIN | null {
    const token = bearerToken(request.headers.authorization);
    const adminToken = this.config.adminToken;
    return adminToken !== undefined && token !== undefined && constantTimeEqual(token, adminToken) ? ADMIN : null;
  }
}

/** Answered by the admin routes' lookup when the bearer token is the admin token. */
const ADMIN = true;

/** What the admin routes' 429 says was missing or invalid: the budget is one per address, API keys included. */
const ADMIN_CREDENTIALS = 'API key or admin token';

/**
 * Runs after AuthGuard: a route of an organization must declare the permission it needs (the caller's key or role
 * must carry it), or, for the organization's people and keys, the role a signed-in member needs.
 */
@Injectable()
export class PermissionGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = request.principal;
    if (!principal) return true; // public, admin or signed-in route
    const handler = context.getHandler();
    const role = this.reflector.getAllAndOverride<Role | undefined>(ROLE_KEY, [handler, context.getClass()]);
    if (role !== undefined) {
      if (principal.type !== 'session') throw AuthErrors.keysManageNoPeople();
      if (!roleAtLeast(principal.role, role)) throw AuthErrors.roleTooLow(role);
      return true;
    }
    const permission = this.reflector.get<Permission | undefined>(PERMISSION_KEY, handler);
    if (!permission) throw AuthErrors.undeclaredPermission();
    const refusal = permissionRefusal(principal, permission);
    if (refusal) throw refusal;
    return true;
  }
}
