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
import { AdminOnly } from '../auth/auth.decorators';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { ADMIN_ROUTE } from '../organizations/admin.controller';
import { AddMemberDto, CreateUserDto, ListUsersQueryDto, MemberDto, UpdateMemberDto, UserDto, UserPageDto } from './dto/people.dto';
import { MEMBER_EXAMPLE, USER_EXAMPLE, USER_PAGE_EXAMPLE } from './dto/people.examples';
import { PeopleService } from './people.service';

/** The admin API's people: users, and who is a member of which organization with which role. */
@ApiTags('admin')
@AdminOnly()
@Controller(ADMIN_ROUTE)
export class AdminPeopleController {
  constructor(private readonly people: PeopleService) {}

  @Post('users')
  @ApiOperation({
    summary: 'Create a user',
    description:
      'A person who signs in (POST /v1/auth/login) and acts in the organizations they are a member of. Without a password they sign in ' +
      'only through single sign-on. Emails are unique, in their one spelling (see the email field). Next: make them a member of an organization. ' +
      'CLI: `FLAGSTORE_PASSWORD=… create-user --email <email> --name <name>`.',
  })
  @ApiJsonBody(CreateUserDto, {
    withPassword: {
      summary: 'Signs in with a password',
      value: { email: 'maya@acme.example', name: 'Maya Lin', password: 'correct horse battery staple' },
    },
    ssoOnly: { summary: 'Signs in through single sign-on only', value: { email: 'sam@acme.example', name: 'Sam Ortiz' } },
  })
  @ApiCreatedResponse({ type: UserDto, example: USER_EXAMPLE })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'EMAIL_TAKEN: a user with this email exists' })
  createUser(@Body() dto: CreateUserDto): Promise<UserDto> {
    return this.people.createUser(dto);
  }

  @Get('users')
  @ApiOperation({
    summary: 'List users, newest first',
    description: 'Pages of 1-100 users (20 by default); `search` keeps those whose email or name contains it, ignoring case. CLI: `list-users`.',
  })
  @ApiOkResponse({ type: UserPageDto, example: USER_PAGE_EXAMPLE })
  listUsers(@Query() query: ListUsersQueryDto): Promise<UserPageDto> {
    return this.people.listUsers(query);
  }

  @Delete('users/:userId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Delete a user: their sessions and memberships end',
    description:
      'They are signed out everywhere at once and leave every organization; the audit log keeps their id, and the former members’ ' +
      'lists their name. Refused while they are the last admin of an organization. CLI: `delete-user --user <userId>`.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'USER_NOT_FOUND' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'LAST_ADMIN: the user is the last admin of an organization (named)' })
  deleteUser(@UuidParam('userId') userId: string): Promise<void> {
    return this.people.deleteUser(userId);
  }

  @Post('organizations/:orgId/members')
  @ApiOperation({
    summary: 'Make a user a member of an organization, with a role',
    description:
      'viewer: reads flags and files; editor: also changes them; admin: also manages the organization’s members, invitations and API keys. ' +
      'A former member joins again. CLI: `add-member --org <orgId> --user <userId> --role <role>`.',
  })
  @ApiJsonBody(AddMemberDto, { editor: { summary: 'An editor', value: { userId: USER_EXAMPLE.id, role: 'editor' } } })
  @ApiCreatedResponse({ type: MemberDto, example: MEMBER_EXAMPLE })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization or user' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'ALREADY_A_MEMBER' })
  addMember(@UuidParam('orgId') orgId: string, @Body() dto: AddMemberDto): Promise<MemberDto> {
    return this.people.addMember(orgId, dto);
  }

  @Patch('organizations/:orgId/members/:userId')
  @ApiOperation({
    summary: "Change a member's role",
    description:
      'Takes effect from their next request, on every instance within a second. The last admin cannot be demoted. ' +
      'CLI: `set-role --org <orgId> --user <userId> --role <role>`.',
  })
  @ApiJsonBody(UpdateMemberDto, { viewer: { summary: 'Read only from now on', value: { role: 'viewer' } } })
  @ApiOkResponse({ type: MemberDto, example: { ...MEMBER_EXAMPLE, role: 'viewer' } })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization, or the user is not a member' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'LAST_ADMIN: the organization’s last admin' })
  updateMember(@UuidParam('orgId') orgId: string, @UuidParam('userId') userId: string, @Body() dto: UpdateMemberDto): Promise<MemberDto> {
    return this.people.setRole(orgId, userId, dto.role);
  }

  @Delete('organizations/:orgId/members/:userId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Remove a member from an organization',
    description:
      'Their sessions lose the organization from the next request (403), on every instance within a second. The last admin cannot be ' +
      'removed. CLI: `remove-member --org <orgId> --user <userId>`.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization, or the user is not a member' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'LAST_ADMIN: the organization’s last admin' })
  removeMember(@UuidParam('orgId') orgId: string, @UuidParam('userId') userId: string): Promise<void> {
    return this.people.removeMember(orgId, userId);
  }
}
