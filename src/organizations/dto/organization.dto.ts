import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsEnum, IsInt, IsString, Max, Min } from 'class-validator';
import { CharLength } from '../../common/validation';
import { ApiKey } from '../../auth/api-key';
import { Organization, Subscription, SubscriptionStatus } from '../organization.model';
import { Permission } from '../../auth/permission';

export class CreateOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Games' })
  @IsString()
  @CharLength(1, 200)
  name: string;
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

  @ApiProperty({ enum: Permission, isArray: true, example: [Permission.FLAGS_READ] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
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

export class CreatedApiKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: Permission, isArray: true }) permissions: Permission[];
  @ApiProperty({ description: 'The key itself. Shown once; only its hash is stored.' }) key: string;
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
