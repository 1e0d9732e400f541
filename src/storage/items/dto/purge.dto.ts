import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEnum, IsOptional, isISO8601, ValidateBy, ValidationOptions } from 'class-validator';
import { STORAGE_KINDS, StorageKind } from '../storage-kind';

/**
 * A strict ISO 8601 date or date-time that JavaScript's Date can also parse. Strict ISO 8601 alone admits
 * week dates (2024-W01-1), ordinal dates (2024-366), the basic format (20240101) and decimal fractions of
 * hours or minutes, which `new Date()` turns into an Invalid Date (and the purge query into a 500).
 */
function isPurgeDate(value: unknown): boolean {
  return typeof value === 'string' && isISO8601(value, { strict: true }) && !Number.isNaN(Date.parse(value));
}

function IsPurgeDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPurgeDate',
      validator: {
        validate: isPurgeDate,
        defaultMessage: (args) => `${args?.property} must be an ISO 8601 date or date-time such as 2026-01-31T00:00:00Z`,
      },
    },
    options,
  );
}

export class PurgeDto {
  @ApiPropertyOptional({ enum: StorageKind })
  @IsOptional()
  @IsEnum(StorageKind, { message: `kind must be one of ${STORAGE_KINDS.join(', ')}` })
  kind?: StorageKind;

  @ApiPropertyOptional({ format: 'date-time', description: 'Purge items created before this time' })
  @IsOptional()
  @IsPurgeDate()
  before?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Purge items created after this time' })
  @IsOptional()
  @IsPurgeDate()
  after?: string;

  @ApiPropertyOptional({ default: false, description: 'Count what would be purged without deleting anything' })
  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;
}

/** A dry run's message: what `purgedCount` counts there, and that nothing is gone (decisions, turn 5). */
export function dryRunPurgeMessage(count: number): string {
  return `Dry run (dryRun: true): ${count} item(s) would be purged; nothing was deleted`;
}

export class PurgeResultDto {
  @ApiProperty({ description: 'What happened, in words: with dryRun, that the files would be purged and nothing was deleted' })
  message: string;

  @ApiProperty({ description: 'Items purged; with dryRun: true, the items that would be purged (none was deleted)' })
  purgedCount: number;

  @ApiProperty({ description: 'true: a dry run, nothing was deleted and purgedCount counts what would be; false: the files are gone' })
  dryRun: boolean;
}

export class MessageDto {
  @ApiProperty() message: string;
}
