import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsEnum, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { CharLength } from '../../common/validation';
import { ApiKey } from '../../auth/api-key';
import { ApiKeyRecord, Organization, Subscription, SubscriptionStatus } from '../organization.model';
import { ALL_PERMISSIONS, Permission } from '../../auth/permission';
import { BoundedList } from '../../common/bounded-list';
import { EMAIL_SPELLING, NormalEmail } from '../../people/email-address';

/** An organization's first admin, created with it (POST /v1/admin/organizations). */
export class FirstAdminDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'maya@acme.example', description: EMAIL_SPELLING })
  @NormalEmail('admin.email')
  @MaxLength(254)
  email: string;

  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Maya Lin' })
  @IsString()
  @CharLength(1, 100)
  name: string;

  @ApiProperty({
    minLength: 12,
    maxLength: 256,
    format: 'password',
    description: 'Used only when no user has this email yet; an existing user keeps theirs',
  })
  @IsString()
  @CharLength(12, 256)
  password: string;
}

export class CreateOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Games' })
  @IsString()
  @CharLength(1, 200)
  name: string;

  @ApiPropertyOptional({
    type: FirstAdminDto,
    description: 'The organization and its first admin in one transaction: a new user, or the existing one with this email',
  })
  @IsOptional()
  @IsObject({ message: 'admin must be an object with email, name and password' })
  @ValidateNested()
  @Type(() => FirstAdminDto)
  admin?: FirstAdminDto;
}

export class UpdateOrganizationDto {
  @ApiProperty({ description: 'Storage allocation in bytes', minimum: 0, example: 1073741824 })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  storageAllocation: number;
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
    description: 'What the key may do, each permission once',
    example: [Permission.FLAGS_READ],
  })
  @IsArray()
  @ArrayMinSize(1)
  @BoundedList(ALL_PERMISSIONS.length, { unique: true })
  @IsEnum(Permission, { each: true, message: `permissions must each be one of ${Object.values(Permission).join(', ')}` })
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
export class OrganizationDetailDto extends OrganizationDto {
  @ApiProperty({ type: [ApiKeyDto], description: 'Oldest first, revoked ones included' }) apiKeys: ApiKeyDto[];
  @ApiProperty({ type: [SubscriptionRecordDto], description: 'Oldest first, cancelled ones included' }) subscriptions: SubscriptionRecordDto[];

  static detail(organization: Organization, apiKeys: ApiKeyRecord[], subscriptions: Subscription[]): OrganizationDetailDto {
    return {
      ...OrganizationDto.from(organization),
      apiKeys: apiKeys.map((apiKey) => ApiKeyDto.from(apiKey)),
      subscriptions: subscriptions.map((subscription) => SubscriptionRecordDto.from(subscription)),
    };
  }
}
