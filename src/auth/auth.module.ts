import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { OrganizationsModule } from '../organizations/organizations.module';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { AuthGuard, PermissionGuard } from './auth.guard';

@Global()
@Module({
  imports: [OrganizationsModule],
  providers: [
    ApiKeyAuthenticator,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
  ],
  exports: [ApiKeyAuthenticator],
})
export class AuthModule {}
