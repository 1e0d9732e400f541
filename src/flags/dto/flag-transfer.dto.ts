import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsIn, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { BoundedList } from '../../common/bounded-list';
import { CharLength, KeepJsonAsSent } from '../../common/validation';
import { FLAG_KEY_PATTERN, FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagSnapshot, FlagType } from '../flag.model';
import { IsFlagValue } from './flag-value.validators';
import { JSON_VALUE_SCHEMA } from './json-value.schema';
import { IsFlagRules, rulesProperty } from './flag-rules.dto';
import type { FlagRule } from '../targeting/flag-rules';

/** The most flags a document may hold: more than any organization may have (50), fewer than a body could carry. */
export const MAX_TRANSFERRED_FLAGS = 1000;

/**
 * A flag as an export gives it and an import takes it: its organization-independent state, matched by key. The
 * import validates each entry with these rules (ImportFlagsDto keeps the entries as sent, so that a message can name
 * the flag).
 */
export class ExportedFlagDto {
  @ApiProperty({ minLength: 1, maxLength: 64, pattern: FLAG_KEY_PATTERN.source, example: 'double-xp' })
  @IsString()
  @Length(1, 64)
  @Matches(FLAG_KEY_PATTERN, { message: 'key must match ^[a-z0-9][a-z0-9_-]*$' })
  key: string;

  @ApiProperty({ minLength: 1, maxLength: 100 })
  @IsString()
  @CharLength(1, 100)
  name: string;

  @ApiProperty({ type: String, nullable: true, maxLength: 500 })
  @IsOptional()
  @IsString()
  @CharLength(0, 500)
  description: string | null;

  @ApiProperty({ enum: FLAG_TYPES })
  @IsIn(FLAG_TYPES, { message: `type must be one of ${FLAG_TYPES.join(', ')}` })
  type: FlagType;

  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: true } as ApiPropertyOptions)
  @KeepJsonAsSent()
  @IsFlagValue()
  value: unknown;

  @ApiProperty({ enum: FLAG_RUNTIMES })
  @IsIn(FLAG_RUNTIMES, { message: `runtime must be one of ${FLAG_RUNTIMES.join(', ')}` })
  runtime: FlagRuntime;

  @ApiProperty()
  @IsBoolean({ message: 'archived must be true or false' })
  archived: boolean;

  @ApiProperty(rulesProperty('Targeting rules; absent when the flag has none'))
  @KeepJsonAsSent()
  @ValidateIf((dto: { rules?: unknown }) => dto.rules !== undefined)
  @IsFlagRules()
  rules?: FlagRule[];
}

export class FlagExportDto {
  @ApiProperty({ type: [ExportedFlagDto], description: 'Every flag of the organization, archived ones included, ordered by key' })
  flags: ExportedFlagDto[];
}

export class ImportFlagsDto {
  @ApiProperty({
    type: [ExportedFlagDto],
    maxItems: MAX_TRANSFERRED_FLAGS,
    description:
      'Flags as GET /v1/flags/export gives them (of another organization, usually); each is checked, and a 400 names the flag and the field',
  })
  // Each entry is validated by the import itself (ExportedFlagDto's rules), naming the flag; values stay exactly as sent.
  @KeepJsonAsSent()
  @IsArray()
  @BoundedList(MAX_TRANSFERRED_FLAGS)
  flags: unknown[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_TRANSFERRED_FLAGS,
    uniqueItems: true,
    description: 'Only these keys of the document (each must be in it, each once); all of them when absent',
  })
  @IsOptional()
  @IsArray()
  @BoundedList(MAX_TRANSFERRED_FLAGS, { unique: true })
  @IsString({ each: true, message: 'keys must be flag keys' })
  keys?: string[];

  @ApiPropertyOptional({ default: false, description: 'true: the report of what the import would do, with its refusals; nothing changes' })
  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;

  @ApiPropertyOptional({
    default: false,
    description:
      'true: nothing changes now; a change request of the import is made instead (201: the request, its dry-run report attached), to be ' +
      'reviewed and applied as any other (POST /v1/change-requests/{id}/apply)',
  })
  @IsOptional()
  @IsBoolean()
  requestReview?: boolean;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: "With requestReview: the request's title (by default one naming the import)" })
  @IsOptional()
  @IsString()
  @CharLength(1, 200)
  title?: string;

  @ApiPropertyOptional({ maxLength: 2000, description: "With requestReview: the request's description" })
  @IsOptional()
  @IsString()
  @CharLength(0, 2000)
  description?: string;
}

export class FlagStateDto implements FlagSnapshot {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA as ApiPropertyOptions) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES }) runtime: FlagRuntime;
  @ApiProperty() archived: boolean;
  @ApiProperty(rulesProperty('Targeting rules; absent when the flag has none')) rules?: FlagRule[];
}

export class ImportedUpdateDto {
  @ApiProperty() key: string;
  @ApiProperty({ type: FlagStateDto }) before: FlagStateDto;
  @ApiProperty({ type: FlagStateDto }) after: FlagStateDto;
}

export class ImportRefusalDto {
  @ApiProperty() key: string;
  @ApiProperty({ description: 'Why the target organization refuses this flag: its allowance, a lock, the archived-value rule' })
  reason: string;
}

export class ImportReportDto {
  @ApiProperty({ type: [String], description: 'Keys created in the target' }) created: string[];
  @ApiProperty({ type: [ImportedUpdateDto], description: 'Flags changed, with their state before and after' }) updated: ImportedUpdateDto[];
  @ApiProperty({ type: [String], description: 'Keys whose state already matched' }) unchanged: string[];
  @ApiProperty({ type: [ImportRefusalDto], description: 'Flags the target refuses; a real import with any refusal changes nothing (409)' })
  refused: ImportRefusalDto[];
}

/** A refused import's 409: the error, and the whole report beside it. */
export class ImportRefusedDto extends ImportReportDto {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ example: 'IMPORT_REFUSED' }) error: string;
  @ApiProperty() message: string;
}
