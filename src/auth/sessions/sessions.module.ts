import { Module } from '@nestjs/common';
import { OWASP_SCRYPT_COST, PasswordHasher, SCRYPT_COST } from './password-hasher';
import { SessionsRepository } from './sessions.repository';

/**
 * What managing people needs of sessions and passwords, in the app and the CLI alike: the sessions' rows (a deleted
 * user's end) and the password hasher. Authenticating sessions (SessionAuthenticator) is the app's alone (AuthModule).
 */
@Module({
  providers: [SessionsRepository, PasswordHasher, { provide: SCRYPT_COST, useValue: OWASP_SCRYPT_COST }],
  exports: [SessionsRepository, PasswordHasher],
})
export class SessionsModule {}
