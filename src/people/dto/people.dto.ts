import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { CharLength } from '../../common/validation';
import { Role, ROLES } from '../../auth/roles';
import { EMAIL_SPELLING, NormalEmail } from '../email-address';
import { Membership, User } from '../people.model';
import { InvitationDeliveryDto } from './mail-links.dto';
import { OrganizationCreationDto } from '../../own-organizations/dto/own-organization.dto';

/** Passwords: 12 to 256 characters (README, "People and sessions"). */
const PASSWORD = { minLength: 12, maxLength: 256, format: 'password' } as const;
const ROLE_MESSAGE = `role must be one of ${ROLES.join(', ')}`;
const EMAIL_VERIFIED =
  'Whether the email is proven: the operator made the user (admin API, CLI) or single sign-on vouched for it. A user made through an ' +
  'invitation link is not (whoever held the link chose the password): single sign-on with that email takes the account over';

const REVIEW_MAIL =
  'Whether the person is mailed about change requests (with mail on): requests opened for them to review, and their own requests ' +
  'decided, applied or failed. On unless they turned it off';

export class CreateUserDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'maya@acme.example', description: `Unique among users. ${EMAIL_SPELLING}` })
  @NormalEmail('email')
  @MaxLength(254)
  email: string;

  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Maya Lin' })
  @IsString()
  @CharLength(1, 100)
  name: string;

  @ApiPropertyOptional({ ...PASSWORD, description: 'Optional: without one, the user signs in only through single sign-on' })
  @IsOptional()
  @IsString()
  @CharLength(12, 256)
  password?: string;
}

export class UserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'idn-email' }) email: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ description: EMAIL_VERIFIED }) emailVerified: boolean;

  static from(user: User): UserDto {
    return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt.toISOString(), emailVerified: user.emailVerified };
  }
}

/** The CLI's verify-user. */
export class VerifyUserDto {
  @NormalEmail('email')
  @MaxLength(254)
  email: string;
}

export class ListUsersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ maxLength: 254, description: 'Keeps users whose email or name contains it, ignoring case' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  search?: string;
}

export class UserPageDto {
  @ApiProperty({ type: [UserDto] }) results: UserDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}

export class AddMemberDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'userId must be a UUID' })
  userId: string;

  @ApiProperty({ enum: ROLES, example: 'editor' })
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role: Role;
}

export class UpdateMemberDto {
  @ApiProperty({ enum: ROLES, example: 'viewer' })
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role: Role;
}

export class MemberDto {
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ format: 'idn-email' }) email: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time', description: 'When they joined' }) createdAt: string;

  static from(member: Membership): MemberDto {
    return { userId: member.userId, email: member.email, name: member.name, role: member.role, createdAt: member.createdAt.toISOString() };
  }
}

export class FormerMemberDto {
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) leftAt: string;
}

export class MemberListDto {
  @ApiProperty({ type: [MemberDto], description: 'Current members, oldest first' }) members: MemberDto[];
  @ApiPropertyOptional({ type: [FormerMemberDto], description: 'With ?former=true: those who left (or were removed), so that history can name them' })
  former?: FormerMemberDto[];
}

export class MembersQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Also list former members' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'former must be true or false' })
  former?: 'true' | 'false';
}

export class LoginDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'maya@acme.example', description: EMAIL_SPELLING })
  @NormalEmail('email')
  @MaxLength(254)
  email: string;

  @ApiProperty({ format: 'password', maxLength: 256 })
  @IsString()
  @MaxLength(256)
  password: string;
}

export class ChangePasswordDto {
  @ApiPropertyOptional({ format: 'password', maxLength: 256, description: 'Required when the user has a password' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  currentPassword?: string;

  @ApiProperty(PASSWORD)
  @IsString()
  @CharLength(12, 256)
  newPassword: string;
}

export class SessionUserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'idn-email' }) email: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: EMAIL_VERIFIED }) emailVerified: boolean;
  @ApiProperty({ description: REVIEW_MAIL }) reviewMail: boolean;

  static from(user: User): SessionUserDto {
    return { id: user.id, email: user.email, name: user.name, emailVerified: user.emailVerified, reviewMail: user.reviewMail };
  }
}

/** PATCH /auth/me: the signed-in person's own settings. */
export class UpdateMeDto {
  @ApiProperty({ description: REVIEW_MAIL })
  @IsBoolean({ message: 'reviewMail must be true or false' })
  reviewMail: boolean;
}

export class SessionOrganizationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ROLES }) role: Role;
}

export class SessionDto {
  @ApiProperty({ type: SessionUserDto }) user: SessionUserDto;
  @ApiProperty({ type: [SessionOrganizationDto], description: "The user's organizations, by name; send one's id as X-Organization-Id" })
  organizations: SessionOrganizationDto[];
  @ApiProperty({ description: 'Send it as X-CSRF-Token on every change (POST, PUT, PATCH, DELETE) made with this session' })
  csrfToken: string;
  @ApiProperty({ type: OrganizationCreationDto, description: 'Whether POST /v1/organizations would create an organization now, and why not' })
  organizationCreation: OrganizationCreationDto;
}

export class CreateInvitationDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'sam@acme.example', description: EMAIL_SPELLING })
  @NormalEmail('email')
  @MaxLength(254)
  email: string;

  @ApiProperty({ enum: ROLES, example: 'editor' })
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role: Role;
}

export class InvitationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'idn-email' }) email: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiPropertyOptional({ type: InvitationDeliveryDto, description: 'With mail on: where the mail that carried the link stands' })
  delivery?: InvitationDeliveryDto;
}

export class CreatedInvitationDto extends InvitationDto {
  @ApiPropertyOptional({
    format: 'uri',
    description:
      "With mail off: the console's page where the invited person joins, shown once, valid 7 days, single use: send it to them. " +
      'With mail on it goes by mail to the invited address only, and is not answered',
  })
  url?: string;
}

export class InvitationOrganizationDto {
  @ApiProperty({ example: 'Acme Games' }) name: string;
}

export class InvitationInviterDto {
  @ApiProperty({ example: 'Maya Lin' }) name: string;
}

/** GET /auth/invitations/{token}: what the invitation's page shows; never whether the email has an account. */
export class InvitationPreviewDto {
  @ApiProperty({ type: InvitationOrganizationDto, description: 'The organization the invitation is to' })
  organization: InvitationOrganizationDto;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ type: InvitationInviterDto, nullable: true, description: 'The admin who invited (null when no longer known)' })
  invitedBy: InvitationInviterDto | null;
  @ApiProperty({ format: 'idn-email', description: 'The invited email, in its one spelling' }) email: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}

export class AcceptInvitationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100, description: 'With password: creates the account of the invited email (when it has none)' })
  @IsOptional()
  @IsString()
  @CharLength(1, 100)
  name?: string;

  @ApiPropertyOptional({ ...PASSWORD, description: 'With name: the new account’s password' })
  @IsOptional()
  @IsString()
  @CharLength(12, 256)
  password?: string;
}
