import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsEnum,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MAX_FLAG_ALLOWANCE } from '../../config/app-config';
import { FlagQuota } from '../../quota/allowance';
import { FeatureFlagQuotaDto } from '../../quota/dto/quota.dto';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { CharLength } from '../../common/validation';
import { ApiKey } from '../../auth/api-key';
import { ApiKeyRecord, Organization, Subscription, SubscriptionStatus } from '../organization.model';
import { ALL_PERMISSIONS, Permission, permissionsError } from '../../auth/permission';
import { BoundedList } from '../../common/bounded-list';
import { EMAIL_SPELLING, NormalEmail } from '../../people/email-address';

/** An organization's first admin, created with it (POST /v1/admin/organizations). */
export class FirstAdminDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'maya@acme.example', description: EMAIL_SPELLING })
  @NormalEmail('admin.email')
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    example: 'Maya Lin',
    description: 'Required for a new user; an existing user keeps their name',
  })
  @ValidateIf((admin: FirstAdminDto) => admin.name !== undefined)
  @IsString()
  @CharLength(1, 100)
  name?: string;

  @ApiPropertyOptional({
    minLength: 12,
    maxLength: 256,
    format: 'password',
    description:
      'Required for a new user (no user has this email yet), refused (400) for an existing one: they keep their password, ' +
      'and nobody types a password for somebody else',
  })
  @ValidateIf((admin: FirstAdminDto) => admin.password !== undefined)
  @IsString()
  @CharLength(12, 256)
  password?: string;
}

export class CreateOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Games' })
  @IsString()
  @CharLength(1, 200)
  name: string;

  @ApiPropertyOptional({
    type: FirstAdminDto,
    description:
      'The organization and its first admin in one transaction: a new user (email, name and password), or the existing one with ' +
      'this email (email alone)',
  })
  @IsOptional()
  @IsObject({ message: 'admin must be an object with email (and name and password for a new user)' })
  @ValidateNested()
  @Type(() => FirstAdminDto)
  admin?: FirstAdminDto;
}

/** Either field or both; absent ones are left as they are. */
export class UpdateOrganizationDto {
  @ApiPropertyOptional({ description: 'Storage allocation in bytes', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, example: 1073741824 })
  @ValidateIf((dto: UpdateOrganizationDto) => dto.storageAllocation !== undefined)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  storageAllocation?: number;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_FLAG_ALLOWANCE,
    example: 500,
    description:
      "The organization's own flag allowance, whatever its subscriptions; `null` gives it back its level's (FLAGS_ALLOWED_FREE, " +
      'or FLAGS_ALLOWED_SUBSCRIBED with an active subscription). Flags beyond it (the newest) are locked, as when a subscription ends.',
  })
  @ValidateIf((dto: UpdateOrganizationDto) => dto.flagAllowance !== null && dto.flagAllowance !== undefined)
  @IsInt({ message: `flagAllowance must be a whole number from 1 to ${MAX_FLAG_ALLOWANCE}, or null` })
  @Min(1, { message: `flagAllowance must be a whole number from 1 to ${MAX_FLAG_ALLOWANCE}, or null` })
  @Max(MAX_FLAG_ALLOWANCE, { message: `flagAllowance must be a whole number from 1 to ${MAX_FLAG_ALLOWANCE}, or null` })
  flagAllowance?: number | null;
}

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'game-server-eu' })
  @IsString()
  @CharLength(1, 100)
  name: string;

  @ApiProperty({
    enum: Permission,
    isArray: true,
    minItems: 1,
    maxItems: ALL_PERMISSIONS.length,
    uniqueItems: true,
    description:
      'What the key may do, each permission once. FLAGS_WRITE_UNREVIEWED (write flags directly while the organization requires ' +
      'review) is only valid beside FLAGS_WRITE.',
    example: [Permission.FLAGS_READ],
  })
  @IsArray()
  @ArrayMinSize(1)
  @BoundedList(ALL_PERMISSIONS.length, { unique: true })
  @IsEnum(Permission, { each: true, message: `permissions must each be one of ${Object.values(Permission).join(', ')}` })
  @ValidateBy({
    name: 'consistentPermissions',
    validator: {
      validate: (value: unknown) => !Array.isArray(value) || permissionsError(value as Permission[]) === null,
      defaultMessage: (args) => permissionsError((args?.value ?? []) as Permission[]) ?? 'permissions are inconsistent',
    },
  })
  permissions: Permission[];
}

export class CreateSubscriptionDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'pro' })
  @IsString()
  @CharLength(1, 100)
  plan: string;
}

export class OrganizationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Storage allocation in bytes' }) storageAllocation: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(organization: Organization): OrganizationDto {
    return {
      id: organization.id,
      name: organization.name,
      storageAllocation: organization.storageAllocation,
      createdAt: organization.createdAt.toISOString(),
    };
  }
}

/** An organization with its flag allowance: what PATCH answers, and the start of the admin read-back. */
export class OrganizationSettingsDto extends OrganizationDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_FLAG_ALLOWANCE,
    description: "The organization's own flag allowance, set by the operator; null: its level's (by subscription)",
  })
  flagAllowance: number | null;

  @ApiProperty({
    type: FeatureFlagQuotaDto,
    description: "The flag quota that applies now (GET /v1/flags/quota's): `max` is flagAllowance when set, else its level's",
  })
  flagQuota: FeatureFlagQuotaDto;

  static settings(organization: Organization, flagQuota: FlagQuota): OrganizationSettingsDto {
    return { ...OrganizationDto.from(organization), flagAllowance: organization.flagAllowance, flagQuota };
  }
}

/** The first admin of an organization created with one. */
export class FirstAdminUserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'idn-email' }) email: string;
  @ApiProperty() name: string;
}

export class CreatedOrganizationDto extends OrganizationDto {
  @ApiPropertyOptional({ type: FirstAdminUserDto, description: 'When the request named a first admin: the user, now its admin' })
  admin?: FirstAdminUserDto;
}

export class CreatedApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: Permission, isArray: true }) permissions: Permission[];
  // The shape generateApiKey() makes; the contract check holds every issued key to it.
  @ApiProperty({
    description: 'The key itself: send it as `Authorization: Bearer <key>`. Shown once; only its hash is stored.',
    pattern: '^fsk_[A-Za-z0-9_-]{43}$',
  })
  key: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(apiKey: ApiKey, key: string): CreatedApiKeyDto {
    return {
      id: apiKey.id,
      name: apiKey.name,
      permissions: apiKey.permissions,
      key,
      createdAt: apiKey.createdAt.toISOString(),
    };
  }
}

export class SubscriptionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() plan: string;
  @ApiProperty({ enum: ['active', 'cancelled'] }) status: SubscriptionStatus;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(subscription: Subscription): SubscriptionDto {
    return {
      id: subscription.id,
      plan: subscription.plan,
      status: subscription.status,
      createdAt: subscription.createdAt.toISOString(),
    };
  }
}

export class ListOrganizationsQueryDto extends PageQueryDto {
  @ApiProperty({ required: false, maxLength: 100, description: 'Case-insensitive substring of the name; % and _ match themselves', example: 'acme' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  search?: string;
}

export class OrganizationPageDto {
  @ApiProperty({ type: [OrganizationDto], description: 'Newest first' }) results: OrganizationDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}

/** An issued API key as the admin API reads it back: what identifies it, never the key or its hash. */
export class ApiKeyDto {
  @ApiProperty({ format: 'uuid', description: 'What DELETE .../api-keys/{keyId} takes' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: Permission, isArray: true }) permissions: Permission[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it was revoked; null while it is live' })
  revokedAt: string | null;

  static from(apiKey: ApiKeyRecord): ApiKeyDto {
    return {
      id: apiKey.id,
      name: apiKey.name,
      permissions: apiKey.permissions,
      createdAt: apiKey.createdAt.toISOString(),
      revokedAt: apiKey.revokedAt?.toISOString() ?? null,
    };
  }
}

/** A subscription as the admin API reads it back: SubscriptionDto and when it was cancelled. */
export class SubscriptionRecordDto extends SubscriptionDto {
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it was cancelled; null while it is active' })
  cancelledAt: string | null;

  static override from(subscription: Subscription): SubscriptionRecordDto {
    return { ...SubscriptionDto.from(subscription), cancelledAt: subscription.cancelledAt?.toISOString() ?? null };
  }
}

/** An organization with every key it was issued and every subscription it had, revoked and cancelled ones included. */
export class OrganizationDetailDto extends OrganizationSettingsDto {
  @ApiProperty({ type: [ApiKeyDto], description: 'Oldest first, revoked ones included' }) apiKeys: ApiKeyDto[];
  @ApiProperty({ type: [SubscriptionRecordDto], description: 'Oldest first, cancelled ones included' }) subscriptions: SubscriptionRecordDto[];

  static detail(organization: Organization, apiKeys: ApiKeyRecord[], subscriptions: Subscription[], flagQuota: FlagQuota): OrganizationDetailDto {
    return {
      ...OrganizationSettingsDto.settings(organization, flagQuota),
      apiKeys: apiKeys.map((apiKey) => ApiKeyDto.from(apiKey)),
      subscriptions: subscriptions.map((subscription) => SubscriptionRecordDto.from(subscription)),
    };
  }
}
