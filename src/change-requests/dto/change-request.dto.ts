import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiPropertyOptions, getSchemaPath } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { BoundedList } from '../../common/bounded-list';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { CharLength, KeepJsonAsSent } from '../../common/validation';
import { IsInstant } from '../../common/instant';
import { FlagStateDto, ImportReportDto } from '../../flags/dto/flag-transfer.dto';
import { FLAG_KEY_PATTERN, FlagSnapshot } from '../../flags/flag.model';
import { CHANGE_REQUEST_STATES, ChangeRequestState } from '../change-request-state';

/** The most flags one request may change: as many as an import document holds. */
export const MAX_CHANGES = 1000;

/** "A flag state, or null": null as a branch of its own (OpenAPI 3.0.3 cannot make a $ref nullable). */
function stateOrNull(description: string): ApiPropertyOptions {
  return { description, oneOf: [{ $ref: getSchemaPath(FlagStateDto) }, { type: 'object', nullable: true, enum: [null] }] };
}

export class ProposedChangeDto {
  @ApiProperty({ minLength: 1, maxLength: 64, pattern: FLAG_KEY_PATTERN.source, example: 'xp-multiplier' })
  key: string;

  @ApiProperty(
    stateOrNull(
      "The flag's proposed whole state (checked as a create or an import checks it; a key with no flag: a create), or null to delete the flag",
    ),
  )
  after: FlagSnapshot | null;
}

@ApiExtraModels(FlagStateDto, ProposedChangeDto)
export class CreateChangeRequestDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'XP weekend: multiplier 2' })
  @IsString()
  @CharLength(1, 200)
  title: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @IsOptional()
  @IsString()
  @CharLength(0, 2000)
  description?: string | null;

  @ApiProperty({
    type: [ProposedChangeDto],
    minItems: 1,
    maxItems: MAX_CHANGES,
    description: 'The flags to change, each key once: `{key, after}`; a 400 names the change (index and key) and the field',
  })
  // Each change is checked by the service (the import's rules for `after`), naming the change; values stay as sent.
  @KeepJsonAsSent()
  @IsArray()
  @ArrayMinSize(1, { message: 'changes must hold at least one change' })
  @BoundedList(MAX_CHANGES)
  changes: unknown[];

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Apply it at this instant once approved (in the future, at most a year ahead), as `system`, on exactly one instance; approved after it: at once',
  })
  @IsOptional()
  @IsInstant('applyAt must be an ISO 8601 instant with its offset, such as 2026-12-04T18:00:00Z')
  applyAt?: string | null;
}

export class UpdateChangeRequestDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @CharLength(1, 200)
  title?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @IsOptional()
  @IsString()
  @CharLength(0, 2000)
  description?: string | null;

  @ApiPropertyOptional({ type: [ProposedChangeDto], minItems: 1, maxItems: MAX_CHANGES, description: 'Replaces every change of the request' })
  @IsOptional()
  @KeepJsonAsSent()
  @IsArray()
  @ArrayMinSize(1, { message: 'changes must hold at least one change' })
  @BoundedList(MAX_CHANGES)
  changes?: unknown[];

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Apply it at this instant (null: no longer scheduled) once approved (in the future, at most a year ahead), as `system`, on exactly one instance; approved after it: at once',
  })
  @IsOptional()
  @IsInstant('applyAt must be an ISO 8601 instant with its offset, such as 2026-12-04T18:00:00Z')
  applyAt?: string | null;
}

export const REVIEW_DECISIONS = ['approve', 'decline'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

export class CreateReviewDto {
  @ApiProperty({ enum: REVIEW_DECISIONS })
  @IsIn(REVIEW_DECISIONS, { message: 'decision must be approve or decline' })
  decision: ReviewDecision;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptional()
  @IsString()
  @CharLength(0, 2000)
  comment?: string;
}

export class OverrideDto {
  @ApiProperty({ minLength: 1, maxLength: 500, example: 'XP multiplier at 20 instead of 2 in production; reverting now' })
  @IsString()
  @CharLength(1, 500)
  reason: string;
}

export class ApplyChangeRequestDto {
  @ApiPropertyOptional({
    type: OverrideDto,
    description: "An admin's apply of an open or approved request without its approvals; the reason goes into every audit entry and the timeline",
  })
  @IsOptional()
  @IsObject({ message: 'override must be an object' })
  @ValidateNested()
  @Type(() => OverrideDto)
  override?: OverrideDto;
}

export class ListChangeRequestsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: CHANGE_REQUEST_STATES, description: 'Only requests in this state' })
  @IsOptional()
  @IsIn(CHANGE_REQUEST_STATES, { message: `state must be one of ${CHANGE_REQUEST_STATES.join(', ')}` })
  state?: ChangeRequestState;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'true: only open requests the caller may review and has not yet (none for an API key)',
  })
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsIn([true, false], { message: 'awaitingMe must be true or false' })
  awaitingMe?: boolean;
}

export const ACTOR_KINDS = ['session', 'apiKey', 'system'] as const;

export class ChangeRequestActorDto {
  @ApiProperty({ enum: ACTOR_KINDS, description: '`session`: a member (id: their user id); `apiKey`: a key; `system`: a scheduled apply' })
  type: (typeof ACTOR_KINDS)[number];
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true, description: "The member's or key's name when it acted" }) name: string | null;
}

@ApiExtraModels(FlagStateDto)
export class ChangeRequestChangeDto {
  @ApiProperty() key: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null for a create' }) flagId: string | null;
  @ApiProperty(stateOrNull("The flag's state when the request was made (or last edited); null for a create")) before: FlagSnapshot | null;
  @ApiProperty(stateOrNull('The proposed state; null for a delete')) after: FlagSnapshot | null;
  @ApiProperty({ type: Number, nullable: true, description: "The flag's version (ETag) `before` is: the apply is refused when it moved on" })
  version: number | null;
}

export class ReviewUserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class ChangeRequestReviewDto {
  @ApiProperty({ type: ReviewUserDto }) user: ReviewUserDto;
  @ApiProperty({ enum: REVIEW_DECISIONS }) decision: ReviewDecision;
  @ApiProperty({ type: String, nullable: true }) comment: string | null;
  @ApiProperty({ format: 'date-time' }) at: string;
}

export const TIMELINE_KINDS = ['opened', 'edited', 'approved', 'declined', 'applied', 'withdrawn', 'failed'] as const;

export class TimelineEventDto {
  @ApiProperty({ enum: TIMELINE_KINDS }) kind: (typeof TIMELINE_KINDS)[number];
  @ApiProperty({ type: ChangeRequestActorDto }) actor: ChangeRequestActorDto;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: "A review's comment, an override's reason or a failure's" })
  reason?: string | null;
  @ApiPropertyOptional({ description: 'An apply by an admin without the approvals' }) override?: boolean;
}

export class ChangeRequestOverrideDto {
  @ApiProperty() reason: string;
}

@ApiExtraModels(ChangeRequestOverrideDto, ImportReportDto)
export class ChangeRequestDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: CHANGE_REQUEST_STATES }) state: ChangeRequestState;
  @ApiProperty({ type: ChangeRequestActorDto }) author: ChangeRequestActorDto;
  @ApiProperty({ type: [ChangeRequestChangeDto] }) changes: ChangeRequestChangeDto[];
  @ApiProperty({ type: [ChangeRequestReviewDto], description: 'The reviews of the current version (an edit clears them)' })
  reviews: ChangeRequestReviewDto[];
  @ApiProperty({ description: 'Approvals the request needs (the review setting)' }) approvalsNeeded: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) applyAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) appliedAt: string | null;
  @ApiProperty({
    description: 'Applied by an admin without the approvals: the reason (null otherwise)',
    oneOf: [{ $ref: getSchemaPath(ChangeRequestOverrideDto) }, { type: 'object', nullable: true, enum: [null] }],
  })
  override: ChangeRequestOverrideDto | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why a scheduled apply failed' }) failureReason: string | null;
  @ApiProperty({
    description:
      "A request made of an import (POST /v1/flags/import with requestReview): the import's dry-run report when it was made; null otherwise",
    oneOf: [{ $ref: getSchemaPath(ImportReportDto) }, { type: 'object', nullable: true, enum: [null] }],
  })
  importReport: ImportReportDto | null;
  @ApiProperty({ type: [TimelineEventDto], description: 'What happened to the request, oldest first' }) timeline: TimelineEventDto[];
}

export class ChangeRequestSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: CHANGE_REQUEST_STATES }) state: ChangeRequestState;
  @ApiProperty({ type: ChangeRequestActorDto }) author: ChangeRequestActorDto;
  @ApiProperty({ type: [String], description: 'The keys of the flags it changes' }) keys: string[];
  @ApiProperty({ description: 'Approvals of the current version' }) approvals: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) applyAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) appliedAt: string | null;
}

export class ChangeRequestPageDto {
  @ApiProperty({ type: [ChangeRequestSummaryDto], description: 'Newest first; GET …/{id} for the changes, reviews and timeline' })
  results: ChangeRequestSummaryDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}

export class StaleFlagDto {
  @ApiProperty() key: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) flagId: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'The version the request was made against (null: the flag did not exist)' })
  requestedVersion: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Its version now (null: it no longer exists)' }) currentVersion: number | null;
  @ApiProperty({ type: [String], description: 'The fields that differ from the request’s `before` (`exists` for a flag created or deleted since)' })
  fields: string[];
}

/** 409 CHANGE_REQUEST_STALE. */
export class ChangeRequestStaleDto {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ example: 'CHANGE_REQUEST_STALE' }) error: string;
  @ApiProperty() message: string;
  @ApiProperty({ type: [StaleFlagDto] }) stale: StaleFlagDto[];
}

/** 409 CHANGE_REQUEST_REFUSED: the import's report beside the error. */
export class ChangeRequestRefusedDto extends ImportReportDto {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ example: 'CHANGE_REQUEST_REFUSED' }) error: string;
  @ApiProperty() message: string;
}
