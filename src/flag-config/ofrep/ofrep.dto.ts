import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { JSON_VALUE_SCHEMA } from '../../flags/dto/json-value.schema';
import { FLAG_RUNTIMES, FLAG_TYPES, FlagRuntime, FlagType } from '../../flags/flag.model';
import { EVALUATION_REASONS, EvaluationReason } from '../../flags/targeting/evaluate-flag';

export class OfrepEvaluationRequestDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "The evaluation context, a JSON object: flags with rules evaluate against its attributes (`targetingKey`, `region`, `build`, a player's id, …); flags without rules ignore it.",
    example: { targetingKey: 'server-eu-1', region: 'eu-west', build: '1.4.2' },
  })
  context: Record<string, unknown>;
}

export class OfrepFlagMetadataDto {
  @ApiProperty({ enum: FLAG_TYPES }) type: FlagType;
  @ApiProperty({ enum: FLAG_RUNTIMES, description: '`server` flags must never be relayed to players' }) runtime: FlagRuntime;
}

export class OfrepEvaluationDto {
  @ApiProperty() key: string;
  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: true } as ApiPropertyOptions) value: unknown;
  @ApiProperty({
    enum: EVALUATION_REASONS,
    description:
      'STATIC: the flag has no rules. TARGETING_MATCH: a rule matched (SPLIT: one with a percentage condition). DEFAULT: it has rules and none matched',
  })
  reason: EvaluationReason;
  @ApiProperty({ description: "The matching rule's id, or `default`", example: 'default' }) variant: string;
  @ApiProperty({ type: OfrepFlagMetadataDto }) metadata: OfrepFlagMetadataDto;
}

export class OfrepEventStreamDto {
  @ApiProperty({ enum: ['sse'] }) type: 'sse';
  @ApiProperty({
    format: 'uri',
    description: 'GET /v1/flags/config/stream with a signed ?token= for this key (an hour; refused once the key is revoked). Never log it.',
  })
  url: string;
  @ApiProperty({ description: 'Seconds of client inactivity after which the stream may be closed', example: 120 })
  inactivityDelaySec: number;
}

export class OfrepBulkEvaluationDto {
  @ApiProperty({ type: [OfrepEvaluationDto], description: 'Every flag of GET /v1/flags/config (non-archived, both runtimes), by key' })
  flags: OfrepEvaluationDto[];

  @ApiPropertyOptional({ type: [OfrepEventStreamDto], description: 'The change stream (OFREP SSE): re-read this bulk answer on its events' })
  eventStreams?: OfrepEventStreamDto[];
}

/** Every OFREP error: OpenFeature's shape. */
export class OfrepErrorDto {
  @ApiPropertyOptional({ description: 'The flag, on a single evaluation' }) key?: string;
  @ApiProperty({
    description:
      'INVALID_CONTEXT, PARSE_ERROR (not JSON), FLAG_NOT_FOUND; or UNAUTHORIZED, FORBIDDEN, RATE_LIMITED, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, SERVICE_UNAVAILABLE, GENERAL',
    example: 'FLAG_NOT_FOUND',
  })
  errorCode: string;
  @ApiProperty({ description: 'What went wrong', example: 'Flag "double-xp" was not found (or is archived)' }) errorDetails: string;
}
