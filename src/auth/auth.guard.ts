import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Permission } from '../organizations/permission';
import { bearerToken, constantTimeEqual } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { Access, ACCESS_KEY, PERMISSION_KEY } from './auth.decorators';
import { AuthErrors, permissionRefusal } from './auth.errors';
import { AuthenticatedRequest } from './principal';

/**
 * Global and deny-by-default: a route is public only if it says so, admin routes need the admin token,
 * and every other route needs a valid API key.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (access === 'public') return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (access === 'admin') {
      const token = bearerToken(request.headers.authorization);
      const adminToken = this.config.adminToken;
      if (!adminToken || !token || !constantTimeEqual(token, adminToken)) {
        throw AuthErrors.invalidAdminToken();
      }
      return true;
    }

    const principal = await this.authenticator.authenticate(request.headers.authorization);
    if (!principal) throw AuthErrors.invalidApiKey();
    request.principal = principal;
    return true;
  }
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
