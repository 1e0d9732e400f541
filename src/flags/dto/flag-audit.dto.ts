import { ApiExtraModels, ApiProperty, ApiPropertyOptions, getSchemaPath, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { IsInstant } from '../../common/instant';
import { CharLength } from '../../common/validation';
import { BadRequestException } from '@nestjs/common';
import { ACTOR_TYPES, ActorType, AuditEntry } from '../../audit/audit-entry';
import { AuditFilter } from '../../audit/audit.repository';
import { PageQueryDto, pageFields, totalPages } from '../../common/dto/pagination';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagAction, FlagRuntime, FlagSnapshot, FlagType, snapshotOf } from '../flag.model';
import type { FlagRule } from '../targeting/flag-rules';
import { rulesProperty } from './flag-rules.dto';
import { JSON_VALUE_SCHEMA } from './json-value.schema';

/** The audit log's filters, shared by the page and the export; each one given narrows the log. */
export class AuditFilterDto {
  @ApiProperty({ required: false, format: 'uuid', description: "Restrict to one flag's history" })
  @IsOptional()
  @IsUUID(undefined, { message: 'flagId must be a valid UUID' })
  flagId?: string;

  @ApiProperty({ required: false, enum: FlagAction, description: 'One action label' })
  @IsOptional()
  @IsIn(Object.values(FlagAction), { message: `action must be one of ${Object.values(FlagAction).join(', ')}` })
  action?: FlagAction;

  @ApiProperty({ required: false, enum: ACTOR_TYPES, description: 'Who made the changes: `apiKey`, `system` (scheduled changes) or `session`' })
  @IsOptional()
  @IsIn(ACTOR_TYPES, { message: `actorType must be one of ${ACTOR_TYPES.join(', ')}` })
  actorType?: ActorType;

  @ApiProperty({ required: false, maxLength: 100, description: 'One actor: an API key id (system changes have none)' })
  @IsOptional()
  @IsString()
  @CharLength(1, 100)
  actorId?: string;

  @ApiProperty({ required: false, maxLength: 64, description: "The flag's key at the time of the change (a deleted flag's history too)" })
  @IsOptional()
  @IsString()
  @CharLength(1, 64)
  flagKey?: string;

  @ApiProperty({ required: false, format: 'date-time', description: 'Entries created at or after this ISO 8601 instant' })
  @IsOptional()
  @IsInstant('from must be an ISO 8601 instant with its offset, such as 2026-12-04T18:00:00Z')
  from?: string;

  @ApiProperty({ required: false, format: 'date-time', description: 'Entries created before this ISO 8601 instant (exclusive)' })
  @IsOptional()
  @IsInstant('to must be an ISO 8601 instant with its offset, such as 2026-12-05T00:00:00Z')
  to?: string;
}

/** The repository's filter; 400 when the time range is empty by construction (from at or after to). */
export function auditFilterOf(dto: AuditFilterDto): AuditFilter {
  const from = dto.from === undefined ? undefined : new Date(dto.from);
  const to = dto.to === undefined ? undefined : new Date(dto.to);
  if (from && to && from.getTime() >= to.getTime()) throw new BadRequestException('from must be before to');
  return { flagId: dto.flagId, action: dto.action, actorType: dto.actorType, actorId: dto.actorId, flagKey: dto.flagKey, from, to };
}

export class AuditQueryDto extends IntersectionType(PageQueryDto, AuditFilterDto) {}

export const AUDIT_EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

export class AuditExportQueryDto extends AuditFilterDto {
  @ApiProperty({ required: false, enum: AUDIT_EXPORT_FORMATS, default: 'ndjson', description: 'One JSON entry per line, or CSV with a header row' })
  @IsOptional()
  @IsIn(AUDIT_EXPORT_FORMATS, { message: `format must be one of ${AUDIT_EXPORT_FORMATS.join(', ')}` })
  format: AuditExportFormat = 'ndjson';
}

export class FlagSnapshotDto {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES }) runtime: FlagRuntime;
  @ApiProperty() archived: boolean;
  @ApiProperty(rulesProperty('Targeting rules; absent when the flag had none')) rules?: FlagRule[];
}

/** Why a change was made (decisions.md, "Audit entries say why"): one of these, for the changes that have a reason to give. */
export class FlagAuditOverrideDto {
  @ApiProperty({ minLength: 1, maxLength: 500 }) reason: string;
}

export class FlagAuditContextDto {
  @ApiProperty({ required: false, format: 'uuid', description: 'A restore: the audit entry whose `after` state the flag went back to' })
  restoredFrom?: string;
  @ApiProperty({ required: false, format: 'uuid', description: 'A scheduled change: the schedule that applied it' })
  scheduleId?: string;
  @ApiProperty({ required: false, enum: [true], description: 'A change made by an import (POST /v1/flags/import)' })
  import?: true;
  @ApiProperty({ required: false, format: 'uuid', description: 'A change made by applying a change request: the request' })
  changeRequestId?: string;
  @ApiProperty({
    required: false,
    type: FlagAuditOverrideDto,
    description: "A change request applied by an admin without its approvals: the admin's reason",
  })
  override?: FlagAuditOverrideDto;
}

/**
 * "A snapshot, or null". Under OpenAPI 3.0.3, `nullable: true` adds null only to a `type` in its own schema object,
 * never to a `$ref` or an `allOf`, so a strict validator would refuse every null given `nullable` beside the
 * snapshot: null is a branch of its own (the only value its `enum` allows), and generators read the pair as
 * `FlagSnapshotDto | null`.
 */
function snapshotOrNull(description: string): ApiPropertyOptions {
  return { description, oneOf: [{ $ref: getSchemaPath(FlagSnapshotDto) }, { type: 'object', nullable: true, enum: [null] }] };
}

@ApiExtraModels(FlagSnapshotDto)
export class FeatureFlagAuditEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null once the flag has been deleted' })
  flagId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The key at the time of the change' })
  flagKey: string | null;
  @ApiProperty({ enum: ACTOR_TYPES }) actorType: ActorType;
  @ApiProperty({ type: String, nullable: true, description: 'API key id for apiKey actors, null for system' })
  actorId: string | null;
  @ApiProperty({ enum: FlagAction }) action: FlagAction;
  @ApiProperty(snapshotOrNull('Null for creations'))
  before: FlagSnapshot | null;
  @ApiProperty(snapshotOrNull('Null for deletions'))
  after: FlagSnapshot | null;
  @ApiProperty({
    required: false,
    type: FlagAuditContextDto,
    description: 'Why the change was made, for a restore, a scheduled change or an import; absent for an ordinary edit',
  })
  context?: FlagAuditContextDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  /** The log stores what it was given: for flag entries, a FlagAction and FlagSnapshots. */
  static from(entry: AuditEntry): FeatureFlagAuditEntryDto {
    return {
      id: entry.id,
      flagId: entry.flagId,
      flagKey: entry.flagKey,
      actorType: entry.actorType,
      actorId: entry.actorId,
      action: entry.action as FlagAction,
      before: entry.before ? snapshotOf(entry.before as FlagSnapshot) : null,
      after: entry.after ? snapshotOf(entry.after as FlagSnapshot) : null,
      ...(entry.context ? { context: entry.context as FlagAuditContextDto } : {}),
      createdAt: entry.createdAt.toISOString(),
    };
  }
}

export class AuditPageDto {
  @ApiProperty({ type: [FeatureFlagAuditEntryDto] }) results: FeatureFlagAuditEntryDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;

  static from(entries: AuditEntry[], total: number, query: AuditQueryDto): AuditPageDto {
    return {
      results: entries.map(FeatureFlagAuditEntryDto.from),
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }
}
