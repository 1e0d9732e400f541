import { Body, Controller, Delete, HttpCode, HttpStatus, Patch, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, CurrentUser, MemberRoute, SignedIn } from '../auth/auth.decorators';
import { SessionPrincipal, SignedInUser } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { SessionOrganizationDto } from '../people/dto/people.dto';
import { CreateOwnOrganizationDto, RenameOrganizationDto } from './dto/own-organization.dto';
import { OwnOrganizationsService } from './own-organizations.service';

const EXAMPLE = { id: '0b9e6d3c-4f2a-4e8b-9c1d-7a5e3f2b1c0d', name: 'Acme Games (staging)', role: 'admin' };
const ADMINS = { forbidden: 'Not an admin of the organization, an API key, no X-Organization-Id of one of yours, or CSRF_TOKEN_INVALID' };

/**
 * Organizations made by the people who use them: a signed-in user creates one (the session alone, no organization
 * named), and its admins rename and delete it (X-Organization-Id names it). API keys never do either.
 */
@ApiTags('organization')
@Controller()
export class OwnOrganizationsController {
  constructor(private readonly organizations: OwnOrganizationsService) {}

  @Post('organizations')
  @SignedIn()
  @ApiOperation({
    summary: 'Create an organization; you are its admin',
    description:
      'A signed-in user (the session cookie and X-CSRF-Token; an API key never creates one: 401) creates an organization as the admin API ' +
      'does (the default storage allocation, no subscription: the free flag allowance) and becomes its admin. With `copyMembersFrom`, ' +
      'the current members of an organization you administer join it with their roles, in the same transaction: how "staging" and ' +
      '"production" get the same team in one step. Who may: ORGANIZATION_CREATION (`admins`, the default: whoever administers at least ' +
      'one organization; `anyone`; `off`), at most ORGANIZATIONS_PER_USER (20) each, counting those still there. GET /v1/auth/session ' +
      'says whether you may now (`organizationCreation`). Send the new id as X-Organization-Id to work in it.',
  })
  @ApiJsonBody(CreateOwnOrganizationDto, {
    empty: { summary: 'An organization of your own', value: { name: 'Acme Games (staging)' } },
    copied: {
      summary: 'With the team of an organization you administer',
      value: { name: 'Acme Games (staging)', copyMembersFrom: '3f0c9a52-7d1e-4b8a-9c6f-2e5d4a1b0c9e' },
    },
  })
  @ApiCreatedResponse({ type: SessionOrganizationDto, example: EXAMPLE })
  @ApiForbiddenResponse({
    type: ApiErrorDto,
    description:
      'ORGANIZATION_CREATION_OFF, ORGANIZATION_CREATION_ADMINS_ONLY (you administer no organization), ORGANIZATION_LIMIT ' +
      '(ORGANIZATIONS_PER_USER reached), COPY_MEMBERS_FORBIDDEN (copyMembersFrom is not an organization you administer), or CSRF_TOKEN_INVALID',
  })
  create(@CurrentUser() user: SignedInUser, @Body() dto: CreateOwnOrganizationDto): Promise<SessionOrganizationDto> {
    return this.organizations.create(user.userId, dto);
  }

  @Patch('organization')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Rename the organization (admins)',
    description: 'Its id, flags, files, keys and members stay as they are; the new name shows in every member’s session body.',
  })
  @ApiJsonBody(RenameOrganizationDto, { production: { summary: 'A new name', value: { name: 'Acme Games (production)' } } })
  @ApiOkResponse({ type: SessionOrganizationDto, example: { ...EXAMPLE, name: 'Acme Games (production)' } })
  rename(@CurrentPrincipal() principal: SessionPrincipal, @Body() dto: RenameOrganizationDto): Promise<SessionOrganizationDto> {
    return this.organizations.rename(principal, dto);
  }

  @Delete('organization')
  @MemberRoute('admin', ADMINS)
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Delete the organization (admins); only an empty one',
    description:
      'Only while it has no flags (archived ones included) and no files (uploads in progress included): 409 ORGANIZATION_NOT_EMPTY ' +
      'otherwise, naming how many are left. Its memberships, invitations, API keys (401 from the next request), subscriptions and ' +
      'audit log go with it, and it frees a place of ORGANIZATIONS_PER_USER for whoever created it. A flag created at the same moment ' +
      'either comes first (then this answers 409) or finds the organization gone.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'ORGANIZATION_NOT_EMPTY: it still has flags or files' })
  delete(@CurrentPrincipal() principal: SessionPrincipal): Promise<void> {
    return this.organizations.delete(principal);
  }
}
