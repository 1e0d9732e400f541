import { Global, Module } from '@nestjs/common';
import { SessionsModule } from '../auth/sessions/sessions.module';
import { ORGANIZATION_FOUNDER } from '../organizations/organization-founder';
import { OrganizationsModule } from '../organizations/organizations.module';
import { InvitationsRepository } from './invitations.repository';
import { MembershipsRepository } from './memberships.repository';
import { PeopleService } from './people.service';
import { UsersRepository } from './users.repository';

/**
 * Users, memberships and invitations, and PeopleService that manages them: in the app (PeopleModule adds the routes
 * and signing in) and the CLI alike. Global for one provider: OrganizationsService finds the organization founder
 * (PeopleService) through it, since people build on organizations and not the other way round.
 */
@Global()
@Module({
  imports: [OrganizationsModule, SessionsModule],
  providers: [
    UsersRepository,
    MembershipsRepository,
    InvitationsRepository,
    PeopleService,
    { provide: ORGANIZATION_FOUNDER, useExisting: PeopleService },
  ],
  exports: [UsersRepository, MembershipsRepository, InvitationsRepository, PeopleService, ORGANIZATION_FOUNDER],
})
export class MembersModule {}
