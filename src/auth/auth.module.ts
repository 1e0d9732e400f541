import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysModule } from './api-keys.module';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthGuard, PermissionGuard } from './auth.guard';

@Global()
@Module({
  imports: [ApiKeysModule],
  providers: [
    ApiKeyAuthenticator,
    AuthFailureLimiter,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
    // Guards run in the order they are provided: authenticated, allowed, then counted.
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [ApiKeyAuthenticator, AuthFailureLimiter],
})
export class AuthModule {}
