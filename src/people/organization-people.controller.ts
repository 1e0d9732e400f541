import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, MemberRoute } from '../auth/auth.decorators';
import { Permission } from '../auth/permission';
import { SessionPrincipal } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from '../organizations/dto/organization.dto';
import { CREATED_API_KEY_EXAMPLE } from '../organizations/dto/organization.examples';
import { OrganizationsService } from '../organizations/organizations.service';
import {
  CreatedInvitationDto,
  CreateInvitationDto,
  InvitationDto,
  MemberDto,
  MemberListDto,
  MembersQueryDto,
  UpdateMemberDto,
} from './dto/people.dto';
import {
  CREATED_INVITATION_EXAMPLE,
  INVITATION_LIST_EXAMPLE,
  MEMBER_EXAMPLE,
  MEMBER_LIST_EXAMPLE,
  ORGANIZATION_API_KEYS_EXAMPLE,
} from './dto/people.examples';
import { InvitationMail } from './invitation-mail';
import { PeopleService } from './people.service';

const ANY_MEMBER = { forbidden: 'An API key (keys never manage people or keys), or no X-Organization-Id of one of your organizations' };
const ADMINS = { forbidden: 'Not an admin of the organization, an API key, no X-Organization-Id of one of yours, or CSRF_TOKEN_INVALID' };

/**
 * The organization's people and keys, managed by its own members with a session (X-Organization-Id names the
 * organization): any member sees the members and keys, admins change them. API keys get 403 here.
 */
@ApiTags('organization')
@Controller('organization')
export class OrganizationPeopleController {
  constructor(
    private readonly people: PeopleService,
    private readonly organizations: OrganizationsService,
    private readonly invitationMail: InvitationMail,
  ) {}

  @Get('members')
  @MemberRoute('viewer', ANY_MEMBER)
  @ApiOperation({
    summary: "The organization's members",
    description:
      'Every current member with their role, oldest first; `?former=true` also lists those who left, by name, so that history can name them.',
  })
  @ApiOkResponse({ type: MemberListDto, example: MEMBER_LIST_EXAMPLE })
  listMembers(@CurrentPrincipal() principal: SessionPrincipal, @Query() query: MembersQueryDto): Promise<MemberListDto> {
    return this.people.listMembers(principal.organizationId, query.former === 'true');
  }

  @Patch('members/:userId')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: "Change a member's role (admins)",
    description: 'From their next request, on every instance within a second. The last admin cannot be demoted (409 LAST_ADMIN).',
  })
  @ApiJsonBody(UpdateMemberDto, { editor: { summary: 'May change flags and files', value: { role: 'editor' } } })
  @ApiOkResponse({ type: MemberDto, example: { ...MEMBER_EXAMPLE, role: 'editor' } })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'MEMBER_NOT_FOUND' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'LAST_ADMIN' })
  updateMember(
    @CurrentPrincipal() principal: SessionPrincipal,
    @UuidParam('userId') userId: string,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberDto> {
    return this.people.setRole(principal.organizationId, userId, dto.role);
  }

  @Delete('members/:userId')
  @MemberRoute('admin', ADMINS)
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Remove a member (admins)',
    description: 'Their sessions lose the organization from the next request. The last admin cannot be removed (409 LAST_ADMIN).',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'MEMBER_NOT_FOUND' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'LAST_ADMIN' })
  removeMember(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('userId') userId: string): Promise<void> {
    return this.people.removeMember(principal.organizationId, userId);
  }

  @Post('invitations')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Invite someone by email (admins)',
    description:
      'With mail off (no SMTP_URL): answers the link (`url`, shown once) to send them: the console’s page where they join with the role given, ' +
      'valid 7 days, single use. With mail on: the link is mailed to the invited address only (written with the invitation: one that fails ' +
      'sends nothing), the answer carries `delivery` instead of `url`, and whoever accepts it as a new account has a verified email. ' +
      'A new invitation for the same email replaces the pending one.',
  })
  @ApiJsonBody(CreateInvitationDto, { editor: { summary: 'An editor', value: { email: 'sam@acme.example', role: 'editor' } } })
  @ApiCreatedResponse({ type: CreatedInvitationDto, example: CREATED_INVITATION_EXAMPLE })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'ALREADY_A_MEMBER: a user with this email is a member already' })
  invite(@CurrentPrincipal() principal: SessionPrincipal, @Body() dto: CreateInvitationDto): Promise<CreatedInvitationDto> {
    return this.invitationMail.invite(principal, dto);
  }

  @Get('invitations')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Pending invitations (admins)',
    description:
      'Neither accepted, withdrawn nor expired; oldest first. The links are not shown again. An invitation whose link was mailed carries ' +
      '`delivery`: where that mail stands (pending, sent, failed with lastError).',
  })
  @ApiOkResponse({ type: [InvitationDto], example: INVITATION_LIST_EXAMPLE })
  listInvitations(@CurrentPrincipal() principal: SessionPrincipal): Promise<InvitationDto[]> {
    return this.invitationMail.list(principal.organizationId);
  }

  @Post('invitations/:invitationId/resend')
  @MemberRoute('admin', ADMINS)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Mail a pending invitation again, with a new link (admins; mail on)',
    description:
      'The invitation gets a new link, valid 7 days from now, mailed to the invited address; the previous link stops working (404). ' +
      'Answers the invitation with its new mail’s `delivery`. With mail off: 404 MAIL_OFF (create a new invitation to get a link).',
  })
  @ApiOkResponse({ type: InvitationDto, example: { ...INVITATION_LIST_EXAMPLE[0], delivery: { state: 'pending', attempts: 0 } } })
  @ApiNotFoundResponse({
    type: ApiErrorDto,
    description: 'INVITATION_NOT_FOUND: no such pending invitation in this organization; MAIL_OFF: SMTP_URL is not set',
  })
  resendInvitation(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('invitationId') invitationId: string): Promise<InvitationDto> {
    return this.invitationMail.resend(principal, invitationId);
  }

  @Delete('invitations/:invitationId')
  @MemberRoute('admin', ADMINS)
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Withdraw a pending invitation (admins)', description: 'Its link stops working at once (410 INVITATION_USED).' })
  @ApiNoContentResponse({ description: 'Withdrawn' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such pending invitation in this organization' })
  withdrawInvitation(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('invitationId') invitationId: string): Promise<void> {
    return this.people.withdrawInvitation(principal.organizationId, invitationId);
  }

  @Get('api-keys')
  @MemberRoute('viewer', ANY_MEMBER)
  @ApiOperation({
    summary: "The organization's API keys",
    description: 'Every key it was issued, oldest first, revoked ones with revokedAt (so that history can name them); never the key itself.',
  })
  @ApiOkResponse({ type: [ApiKeyDto], example: ORGANIZATION_API_KEYS_EXAMPLE })
  listApiKeys(@CurrentPrincipal() principal: SessionPrincipal): Promise<ApiKeyDto[]> {
    return this.people.listApiKeys(principal.organizationId);
  }

  @Post('api-keys')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Issue an API key (admins); the key is in this response only',
    description: 'As the admin API issues one: stored only as a hash, working on every instance at once. Give a game server FLAGS_READ alone.',
  })
  @ApiJsonBody(CreateApiKeyDto, {
    gameServer: { summary: 'A game server: reads flags only', value: { name: 'game-server-eu', permissions: [Permission.FLAGS_READ] } },
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto, example: CREATED_API_KEY_EXAMPLE })
  createApiKey(@CurrentPrincipal() principal: SessionPrincipal, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.organizations.createApiKey(principal.organizationId, dto);
  }

  @Delete('api-keys/:keyId')
  @MemberRoute('admin', ADMINS)
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Revoke an API key (admins)',
    description: 'It answers 401 from the next request on this instance, and within a second on every other; it stays listed with revokedAt.',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such active key in this organization' })
  revokeApiKey(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('keyId') keyId: string): Promise<void> {
    return this.organizations.revokeApiKey(principal.organizationId, keyId);
  }
}
