import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { OwnOrganizationsController } from './own-organizations.controller';
import { OwnOrganizationsRepository } from './own-organizations.repository';
import { OwnOrganizationsService } from './own-organizations.service';

/**
 * Organizations made, renamed and deleted by the people who use them (POST /v1/organizations, PATCH and DELETE
 * /v1/organization). People's users and memberships come from the global MembersModule.
 */
@Module({
  imports: [OrganizationsModule],
  controllers: [OwnOrganizationsController],
  providers: [OwnOrganizationsRepository, OwnOrganizationsService],
  exports: [OwnOrganizationsService],
})
export class OwnOrganizationsModule {}
