import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEnum, IsISO8601, IsOptional } from 'class-validator';
import { STORAGE_KINDS, StorageKind } from '../storage-kind';

export class PurgeDto {
  @ApiPropertyOptional({ enum: StorageKind })
  @IsOptional()
  @IsEnum(StorageKind, { message: `kind must be one of ${STORAGE_KINDS.join(', ')}` })
  kind?: StorageKind;

  @ApiPropertyOptional({ format: 'date-time', description: 'Purge items created before this time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'before must be an ISO 8601 date' })
  before?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Purge items created after this time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'after must be an ISO 8601 date' })
  after?: string;

  @ApiPropertyOptional({ default: false, description: 'Count what would be purged without deleting anything' })
  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;
}

export class PurgeResultDto {
  @ApiProperty() message: string;
  @ApiProperty({ description: 'Items purged (with dryRun: items that would be purged)' }) purgedCount: number;
}

export class MessageDto {
  @ApiProperty() message: string;
}
