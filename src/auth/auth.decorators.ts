import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../organizations/permission';
import { AuthenticatedRequest, Principal } from './principal';

export const PERMISSION_KEY = 'auth:permission';
export const ACCESS_KEY = 'auth:access';
export type Access = 'public' | 'admin';

export const API_KEY_SECURITY = 'apiKey';
export const ADMIN_SECURITY = 'adminToken';

/** The route needs an API key carrying this permission; also documents bearer auth, 401 and 403. */
export function RequirePermission(permission: Permission) {
  return applyDecorators(
    SetMetadata(PERMISSION_KEY, permission),
    ApiBearerAuth(API_KEY_SECURITY),
    ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'Missing, unknown or revoked API key' }),
    ApiForbiddenResponse({ type: ApiErrorDto, description: `The API key lacks ${permission}` }),
  );
}

/** The route is authorised by `Authorization: Bearer $ADMIN_TOKEN` instead of an API key. */
export function AdminOnly() {
  return applyDecorators(
    SetMetadata(ACCESS_KEY, 'admin' satisfies Access),
    ApiBearerAuth(ADMIN_SECURITY),
    ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'Missing or wrong admin token, or ADMIN_TOKEN is not configured' }),
    ApiBadRequestResponse({ type: ApiErrorDto, description: 'Validation failed; the message names the field' }),
  );
}

/** The route needs no bearer header (health, docs, the signed upload routes, the CDN). */
export const Public = () => SetMetadata(ACCESS_KEY, 'public' satisfies Access);

export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route that does not authenticate an API key');
  return principal;
});
