import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID } from 'class-validator';
import { CharLength } from '../../common/validation';
import { CREATION_REFUSALS, CreationRefusal } from '../own-organizations.errors';

export class CreateOwnOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Games (staging)' })
  @IsString()
  @CharLength(1, 200)
  name: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'An organization you administer: its current members join the new one with the roles they have there, in the same transaction ' +
      '(you are its admin whatever your role). Nobody is asked for a password: they sign in as they already do.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'copyMembersFrom must be a UUID (the id of an organization you administer)' })
  copyMembersFrom?: string;
}

export class RenameOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Games (production)' })
  @IsString()
  @CharLength(1, 200)
  name: string;
}

/** Whether the signed-in user may create an organization now (POST /v1/organizations), and if not, why. */
export class OrganizationCreationDto {
  @ApiProperty({ description: 'True when POST /v1/organizations would create one now' })
  allowed: boolean;

  @ApiProperty({
    type: String,
    // OpenAPI 3.0: a nullable enum lists null among its values.
    enum: [...CREATION_REFUSALS, null],
    nullable: true,
    description:
      'Why not (null when allowed): ORGANIZATION_CREATION_OFF (the deployment does not let users create organizations), ' +
      'ORGANIZATION_CREATION_ADMINS_ONLY (only admins of an organization may), ORGANIZATION_LIMIT (created ORGANIZATIONS_PER_USER already)',
  })
  reason: CreationRefusal | null;

  @ApiProperty({ description: 'Organizations this user created and that still exist (deleting one frees its place)', minimum: 0 })
  created: number;

  @ApiProperty({ description: 'ORGANIZATIONS_PER_USER: how many one user may have created', minimum: 1 })
  limit: number;
}
