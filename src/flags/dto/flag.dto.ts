import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { FeatureFlagQuotaDto } from '../../quota/dto/quota.dto';
import { Flag, FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType, RUNTIME_DESCRIPTION, snapshotOf } from '../flag.model';
import { JSON_VALUE_SCHEMA } from './json-value.schema';
import { rulesProperty } from './flag-rules.dto';
import type { FlagRule } from '../targeting/flag-rules';

/** The management view of a flag. */
export class FeatureFlagDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: 'Immutable, unique in the organization', example: 'double-xp-weekend' }) key: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES, description: RUNTIME_DESCRIPTION }) runtime: FlagRuntime;
  @ApiProperty({ description: 'Archived flags are left out of the config payload' }) archived: boolean;
  @ApiProperty(rulesProperty('Targeting rules, in order; absent when the flag has none')) rules?: FlagRule[];
  @ApiProperty({ description: 'Beyond the allowance: still serving, but name, description, value and runtime cannot be edited' })
  locked: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(flag: Flag, locked: boolean): FeatureFlagDto {
    return {
      id: flag.id,
      key: flag.key,
      ...snapshotOf(flag),
      locked,
      createdAt: flag.createdAt.toISOString(),
      updatedAt: flag.updatedAt.toISOString(),
    };
  }
}

const BOOLEAN_QUERY: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

export class ListFlagsQueryDto extends PageQueryDto {
  @ApiProperty({ required: false, maxLength: 100, description: 'Case-insensitive substring of key or name' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  search?: string;

  @ApiProperty({ required: false, enum: ['true', 'false', '1', '0'], default: 'false' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' && value in BOOLEAN_QUERY ? BOOLEAN_QUERY[value] : value))
  @IsBoolean({ message: 'includeArchived must be one of true, false, 1, 0' })
  includeArchived: boolean = false;
}

export class FlagPageDto {
  @ApiProperty({ type: [FeatureFlagDto], description: 'Newest first' }) results: FeatureFlagDto[];
  @ApiProperty({ type: FeatureFlagQuotaDto }) quota: FeatureFlagQuotaDto;
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}
