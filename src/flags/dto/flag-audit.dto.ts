import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { ACTOR_TYPES, ActorType, AuditEntry } from '../../audit/audit-entry';
import { PageQueryDto, pageFields, totalPages } from '../../common/dto/pagination';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagAction, FlagRuntime, FlagSnapshot, FlagType } from '../flag.model';
import { JSON_VALUE_SCHEMA } from './json-value.schema';

export class AuditQueryDto extends PageQueryDto {
  @ApiProperty({ required: false, format: 'uuid', description: "Restrict to one flag's history" })
  @IsOptional()
  @IsUUID(undefined, { message: 'flagId must be a valid UUID' })
  flagId?: string;
}

export class FlagSnapshotDto {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES }) runtime: FlagRuntime;
  @ApiProperty() archived: boolean;
}

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
  @ApiProperty({ type: FlagSnapshotDto, nullable: true, description: 'Null for creations' })
  before: FlagSnapshot | null;
  @ApiProperty({ type: FlagSnapshotDto, nullable: true, description: 'Null for deletions' })
  after: FlagSnapshot | null;
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
      before: entry.before as FlagSnapshot | null,
      after: entry.after as FlagSnapshot | null,
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
