import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { OwnOrganizationsModule } from '../own-organizations/own-organizations.module';
import { AdminPeopleController } from './admin-people.controller';
import { AuthController } from './auth.controller';
import { EmailTokensRepository } from './email-tokens.repository';
import { EmailVerificationService } from './email-verification.service';
import { InvitationMail } from './invitation-mail';
import { MembersModule } from './members.module';
import { noStore } from './no-store';
import { OrganizationPeopleController } from './organization-people.controller';
import { PasswordResetService } from './password-reset.service';
import { SignInService } from './sign-in.service';
import { SsoController } from './sso.controller';
import { SsoService } from './sso.service';
import { UserIdentitiesRepository } from './user-identities.repository';

/** People on the HTTP API (README, "People and sessions"): the admin API's users and members, signing in, and an organization's own people and keys. */
@Module({
  imports: [MembersModule, OrganizationsModule, OwnOrganizationsModule, MailModule],
  controllers: [AuthController, SsoController, AdminPeopleController, OrganizationPeopleController],
  providers: [
    SignInService,
    SsoService,
    UserIdentitiesRepository,
    InvitationMail,
    PasswordResetService,
    EmailVerificationService,
    EmailTokensRepository,
  ],
})
export class PeopleModule implements NestModule {
  /** No cache keeps an answer of sign-in, the session or an invitation, refusals included (before the guards). */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(noStore).forRoutes(AuthController);
  }
}
