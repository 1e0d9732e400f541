import { ApiProperty } from '@nestjs/swagger';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType } from '../../flags/flag.model';
import { JSON_VALUE_SCHEMA } from '../../flags/dto/json-value.schema';
import { POLL_INTERVAL_SECONDS } from '../config-payload';
import { rulesProperty } from '../../flags/dto/flag-rules.dto';
import type { FlagRule } from '../../flags/targeting/flag-rules';

export class FlagConfigEntryDto {
  @ApiProperty({ example: 'double-xp-weekend' }) key: string;
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty(JSON_VALUE_SCHEMA) value: unknown;
  @ApiProperty({ enum: FLAG_RUNTIMES, description: '`server` flags must never be forwarded to clients' }) runtime: FlagRuntime;
  @ApiProperty(
    rulesProperty(
      'Targeting rules, for the server to evaluate against its context (the SDK does); absent when the flag has none. Never relay them to players: relay the resolved value.',
    ),
  )
  rules?: FlagRule[];
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
