import { ApiProperty } from '@nestjs/swagger';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType } from '../../flags/flag.model';
import { JSON_VALUE_SCHEMA } from '../../flags/dto/json-value.schema';
import { POLL_INTERVAL_SECONDS } from '../config-payload';

export class FlagConfigEntryDto {
  @ApiProperty({ example: 'double-xp-weekend' }) key: string;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES, description: '`server` flags must never be forwarded to clients' }) runtime: FlagRuntime;
}

export class ConfigPayloadDto {
  @ApiProperty({ description: 'The ETag header without W/ and quotes', example: 'q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6' })
  etag: string;
  @ApiProperty({ format: 'date-time', description: 'When this payload was built' }) generatedAt: string;
  @ApiProperty({ example: POLL_INTERVAL_SECONDS, description: 'Suggested seconds between polls (advisory)' })
  pollIntervalSeconds: number;
  @ApiProperty({ type: [FlagConfigEntryDto], description: 'Every non-archived flag, ordered by key' })
  flags: FlagConfigEntryDto[];
}
