import { Global, Module } from '@nestjs/common';
import { ORGANIZATION_FOUNDER } from '../organizations/organization-founder';
import { OrganizationsModule } from '../organizations/organizations.module';
import { AdminPeopleController } from './admin-people.controller';
import { AuthController } from './auth.controller';
import { InvitationsRepository } from './invitations.repository';
import { MembershipsRepository } from './memberships.repository';
import { OrganizationPeopleController } from './organization-people.controller';
import { PeopleService } from './people.service';
import { SignInService } from './sign-in.service';
import { UsersRepository } from './users.repository';

/**
 * People: users, memberships, invitations and signing in (README, "People and sessions"); sessions themselves are
 * auth's. Global for one provider: OrganizationsService finds the organization founder (PeopleService) through it.
 */
@Global()
@Module({
  imports: [OrganizationsModule],
  controllers: [AuthController, AdminPeopleController, OrganizationPeopleController],
  providers: [
    UsersRepository,
    MembershipsRepository,
    InvitationsRepository,
    PeopleService,
    SignInService,
    { provide: ORGANIZATION_FOUNDER, useExisting: PeopleService },
  ],
  exports: [PeopleService, SignInService, ORGANIZATION_FOUNDER],
})
export class PeopleModule {}
