import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';
import { IsInstant } from '../../../common/instant';
import { PageQueryDto, pageFields } from '../../../common/dto/pagination';
import { UpdateFlagDto } from '../../dto/flag-input.dto';
import { JSON_VALUE_SCHEMA } from '../../dto/json-value.schema';
import { rulesProperty } from '../../dto/flag-rules.dto';
import type { FlagRule } from '../../targeting/flag-rules';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType } from '../../flag.model';
import { FlagSchedule, SCHEDULE_STATES, ScheduleState } from '../flag-schedule';

export class CreateFlagScheduleDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-12-04T18:00:00Z',
    description: 'When to apply the change: an ISO 8601 instant with its offset, in the future, at most one year ahead',
  })
  @IsInstant('at must be an ISO 8601 instant with its offset, such as 2026-12-04T18:00:00Z')
  at: string;

  @ApiProperty({ type: UpdateFlagDto, description: "Any of PATCH's fields, with PATCH's rules (type together with value)" })
  @IsObject({ message: 'change must be an object of PATCH fields' })
  @ValidateNested({ message: 'change must be an object of PATCH fields' })
  @Type(() => UpdateFlagDto)
  change: UpdateFlagDto;
}

export class ListFlagSchedulesQueryDto extends PageQueryDto {}

/** What a schedule changes (PATCH's fields, only those it sets). */
export class ScheduledChangeDto {
  @ApiProperty({ required: false }) name?: string;
  @ApiProperty({ required: false, type: String, nullable: true }) description?: string | null;
  @ApiProperty({ required: false, enum: FLAG_TYPES }) type?: FlagType;
  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: false } as ApiPropertyOptions) value?: unknown;
  @ApiProperty({ required: false, enum: FLAG_RUNTIMES }) runtime?: FlagRuntime;
  @ApiProperty({ required: false }) archived?: boolean;
  @ApiProperty(rulesProperty('The rules list it sets ([] removes them)')) rules?: FlagRule[];
}

export class FlagScheduleDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) flagId: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: ScheduledChangeDto }) change: ScheduledChangeDto;
  @ApiProperty({ enum: SCHEDULE_STATES, description: '`pending` until `at`, then `applied`, or `failed` (see `reason`)' })
  state: ScheduleState;
  @ApiProperty({ type: String, nullable: true, description: 'Why the rules refused the change (failed only)' })
  reason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it was applied or failed' })
  settledAt: string | null;

  static from(schedule: FlagSchedule): FlagScheduleDto {
    return {
      id: schedule.id,
      flagId: schedule.flagId,
      at: schedule.at.toISOString(),
      change: schedule.change,
      state: schedule.state,
      reason: schedule.reason,
      createdAt: schedule.createdAt.toISOString(),
      settledAt: schedule.settledAt?.toISOString() ?? null,
    };
  }
}

export class FlagSchedulePageDto {
  @ApiProperty({ type: [FlagScheduleDto], description: 'In the order they apply: by at, then in the order they were made' })
  results: FlagScheduleDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}
