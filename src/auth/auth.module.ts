import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysModule } from './api-keys.module';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthGuard, PermissionGuard } from './auth.guard';
import { RequestAuthenticator } from './request-authenticator';
import { SessionAuthenticator } from './sessions/session-authenticator';
import { SessionStreams } from './sessions/session-streams';
import { SessionsModule } from './sessions/sessions.module';
import { SignInLimiter } from './sessions/sign-in-limiter';

@Global()
@Module({
  imports: [ApiKeysModule, SessionsModule],
  providers: [
    ApiKeyAuthenticator,
    AuthFailureLimiter,
    SessionAuthenticator,
    SessionStreams,
    RequestAuthenticator,
    SignInLimiter,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
    // Guards run in the order they are provided: authenticated, allowed, then counted.
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [ApiKeyAuthenticator, AuthFailureLimiter, RequestAuthenticator, SessionAuthenticator, SessionStreams, SignInLimiter, SessionsModule],
})
export class AuthModule {}
