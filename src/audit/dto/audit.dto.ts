import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto, pageFields } from '../../common/dto/pagination';
import { AuditAction, FlagSnapshot } from '../audit-action';
import { ActorType, AuditEntryEntity } from '../audit-entry.entity';
import { JSON_VALUE_SCHEMA } from '../../flags/dto/json-value.schema';

export class AuditQueryDto extends PageQueryDto {
  @ApiProperty({ required: false, format: 'uuid', description: "Restrict to one flag's history" })
  @IsOptional()
  @IsUUID(undefined, { message: 'flagId must be a valid UUID' })
  flagId?: string;
}

export class FlagSnapshotDto {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: ['boolean', 'string', 'number', 'json'] }) type: string;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: ['shared', 'server'] }) runtime: string;
  @ApiProperty() archived: boolean;
}

export class FeatureFlagAuditEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Null once the flag has been deleted' })
  flagId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The key at the time of the change' })
  flagKey: string | null;
  @ApiProperty({ enum: ['session', 'apiKey', 'system'] }) actorType: ActorType;
  @ApiProperty({ type: String, nullable: true, description: 'API key id for apiKey actors, null for system' })
  actorId: string | null;
  @ApiProperty({ enum: AuditAction }) action: AuditAction;
  @ApiProperty({ type: FlagSnapshotDto, nullable: true, description: 'Null for creations' })
  before: FlagSnapshot | null;
  @ApiProperty({ type: FlagSnapshotDto, nullable: true, description: 'Null for deletions' })
  after: FlagSnapshot | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(entry: AuditEntryEntity): FeatureFlagAuditEntryDto {
    return {
      id: entry.id,
      flagId: entry.flagId,
      flagKey: entry.flagKey,
      actorType: entry.actorType,
      actorId: entry.actorId,
      action: entry.action,
      before: entry.before,
      after: entry.after,
      createdAt: entry.createdAt.toISOString(),
    };
  }
}

export class AuditPageDto {
  @ApiProperty({ type: [FeatureFlagAuditEntryDto] }) results: FeatureFlagAuditEntryDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}
