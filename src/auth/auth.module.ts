import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysModule } from './api-keys.module';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthGuard, PermissionGuard } from './auth.guard';
import { RequestAuthenticator } from './request-authenticator';
import { OWASP_SCRYPT_COST, PasswordHasher, SCRYPT_COST } from './sessions/password-hasher';
import { SessionAuthenticator } from './sessions/session-authenticator';
import { SessionsRepository } from './sessions/sessions.repository';
import { SignInLimiter } from './sessions/sign-in-limiter';

@Global()
@Module({
  imports: [ApiKeysModule],
  providers: [
    ApiKeyAuthenticator,
    AuthFailureLimiter,
    SessionsRepository,
    SessionAuthenticator,
    RequestAuthenticator,
    PasswordHasher,
    { provide: SCRYPT_COST, useValue: OWASP_SCRYPT_COST },
    SignInLimiter,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: PermissionGuard },
    // Guards run in the order they are provided: authenticated, allowed, then counted.
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [ApiKeyAuthenticator, AuthFailureLimiter, RequestAuthenticator, SessionAuthenticator, PasswordHasher, SignInLimiter],
})
export class AuthModule {}
