import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID, Length, Matches, ValidateIf } from 'class-validator';
import { CharLength, KeepJsonAsSent } from '../../common/validation';
import { FLAG_KEY_PATTERN, FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType, RUNTIME_DESCRIPTION } from '../flag.model';
import type { FlagRule } from '../targeting/flag-rules';
import { IsFlagValue, Immutable, SentWith } from './flag-value.validators';
import { IsFlagRules, rulesProperty } from './flag-rules.dto';
import { JSON_VALUE_SCHEMA } from './json-value.schema';

const TYPE_MESSAGE = `type must be one of ${FLAG_TYPES.join(', ')}`;
const RUNTIME_MESSAGE = `runtime must be one of ${FLAG_RUNTIMES.join(', ')}`;

export class CreateFlagDto {
  @ApiProperty({ minLength: 1, maxLength: 64, pattern: FLAG_KEY_PATTERN.source, example: 'double-xp-weekend' })
  @IsString()
  @Length(1, 64)
  @Matches(FLAG_KEY_PATTERN, {
    message: 'key must match ^[a-z0-9][a-z0-9_-]*$ (lowercase letters, digits, _ and -, not starting with _ or -)',
  })
  key: string;

  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Double XP weekend' })
  @IsString()
  @CharLength(1, 100)
  name: string;

  @ApiProperty({ required: false, type: String, nullable: true, maxLength: 500 })
  @IsOptional()
  @IsString()
  @CharLength(0, 500)
  description?: string | null;

  @ApiProperty({ enum: FLAG_TYPES })
  @IsIn(FLAG_TYPES, { message: TYPE_MESSAGE })
  type: FlagType;

  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: true } as ApiPropertyOptions)
  @KeepJsonAsSent()
  @IsFlagValue()
  value: unknown;

  @ApiProperty({
    required: false,
    enum: FLAG_RUNTIMES,
    default: 'shared',
    description: `${RUNTIME_DESCRIPTION} Default: \`shared\`.`,
  })
  @IsOptional()
  @IsIn(FLAG_RUNTIMES, { message: RUNTIME_MESSAGE })
  runtime?: FlagRuntime;

  @ApiProperty(
    rulesProperty("Targeting: the first rule whose conditions all hold gives its value; none holding, `value`. Each rule's value follows `type`."),
  )
  @KeepJsonAsSent()
  @ValidateIf((dto: { rules?: unknown }) => dto.rules !== undefined)
  @IsFlagRules()
  rules?: FlagRule[];
}

export class UpdateFlagDto {
  @ApiProperty({ required: false, type: String, description: 'Immutable: sending it fails with 400', readOnly: true })
  @Immutable('key cannot be changed')
  key?: never;

  @ApiProperty({ required: false, minLength: 1, maxLength: 100 })
  @ValidateIf((dto: UpdateFlagDto) => dto.name !== undefined)
  @IsString()
  @CharLength(1, 100)
  name?: string;

  @ApiProperty({ required: false, type: String, nullable: true, maxLength: 500, description: 'null clears it' })
  @ValidateIf((dto: UpdateFlagDto) => dto.description !== undefined && dto.description !== null)
  @IsString()
  @CharLength(0, 500)
  description?: string | null;

  @ApiProperty({ required: false, enum: FLAG_TYPES, description: 'Must be sent together with value' })
  @ValidateIf((dto: UpdateFlagDto) => dto.type !== undefined || dto.value !== undefined)
  @SentWith('value')
  @IsIn(FLAG_TYPES, { message: TYPE_MESSAGE })
  type?: FlagType;

  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: false, description: 'Must be sent together with type' } as ApiPropertyOptions)
  @KeepJsonAsSent()
  @ValidateIf((dto: UpdateFlagDto) => dto.value !== undefined)
  @SentWith('type')
  @IsFlagValue()
  value?: unknown;

  @ApiProperty({ required: false, enum: FLAG_RUNTIMES, description: RUNTIME_DESCRIPTION })
  @ValidateIf((dto: UpdateFlagDto) => dto.runtime !== undefined)
  @IsIn(FLAG_RUNTIMES, { message: RUNTIME_MESSAGE })
  runtime?: FlagRuntime;

  @ApiProperty({ required: false, description: 'true archives, false restores' })
  @ValidateIf((dto: UpdateFlagDto) => dto.archived !== undefined)
  @IsBoolean()
  archived?: boolean;

  @ApiProperty(
    rulesProperty(
      'Replaces the whole list; [] removes every rule. Changes what the flag serves: refused on a locked (403) or archived (409) flag, as value is. ' +
        'A type change on a flag with rules must send rules of the new type.',
    ),
  )
  @KeepJsonAsSent()
  @ValidateIf((dto: UpdateFlagDto) => dto.rules !== undefined)
  @IsFlagRules()
  rules?: FlagRule[];
}

export class RestoreFlagDto {
  @ApiProperty({ format: 'uuid', description: "An audit entry of this flag: the flag returns to that entry's `after` state" })
  @IsUUID(undefined, { message: 'auditEntryId must be a valid UUID' })
  auditEntryId: string;
}
