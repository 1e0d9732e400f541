import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { IsObject } from 'class-validator';
import { KeepJsonAsSent } from '../../common/validation';
import { EVALUATION_REASONS, EvaluationReason } from '../targeting/evaluate-flag';
import { JSON_VALUE_SCHEMA } from './json-value.schema';

export class EvaluateFlagDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The evaluation context: the attributes rules read (`targetingKey`, `serverId`, `region`, `build`, a player's own)",
    example: { serverId: 'eu-west-17', region: 'eu-west', build: '1.4.2' },
  })
  @KeepJsonAsSent()
  @IsObject({ message: 'context must be a JSON object, such as {"serverId": "eu-west-17"}' })
  context: Record<string, unknown>;
}

export class FlagEvaluationDto {
  @ApiProperty({ ...JSON_VALUE_SCHEMA, required: true, description: 'The value the context gets' } as ApiPropertyOptions) value: unknown;
  @ApiProperty({
    enum: EVALUATION_REASONS,
    description: 'STATIC: no rules. TARGETING_MATCH: a rule matched (SPLIT: one with a percentage condition). DEFAULT: none matched',
  })
  reason: EvaluationReason;
  @ApiProperty({ description: "The matching rule's id, or `default`", example: 'canary' }) variant: string;
}
