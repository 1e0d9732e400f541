import { ApiExtraModels, ApiProperty, ApiPropertyOptions, getSchemaPath } from '@nestjs/swagger';
import { registerDecorator, ValidationArguments } from 'class-validator';
import { ATTRIBUTE_PATTERN, FlagRule, flagRulesError, MAX_CONDITIONS, MAX_IN_VALUES, MAX_RULES, RULE_ID_PATTERN } from '../targeting/flag-rules';
import { JSON_VALUE_SCHEMA } from './json-value.schema';

/*
 * The OpenAPI schemas of rules and conditions, exactly: one condition schema per operator family, so that a generated
 * client knows which `values` each operator takes. Validation itself is flagRulesError's (one home for the rules),
 * which names the field of any 400.
 */

const ATTRIBUTE: ApiPropertyOptions = {
  pattern: ATTRIBUTE_PATTERN.source,
  description: 'A key of the evaluation context, read as is (`region`, `build`, `targetingKey`, `player.tier`)',
  example: 'region',
};

export class ListConditionDto {
  @ApiProperty(ATTRIBUTE) attribute: string;
  @ApiProperty({
    enum: ['in', 'notIn'],
    description: "The attribute's string form (a number as JSON writes it) is (is not) one of values; missing holds for notIn only",
  })
  operator: 'in' | 'notIn';
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_IN_VALUES, example: ['eu-west', 'eu-central'] }) values: string[];
}

export class NumberConditionDto {
  @ApiProperty({ ...ATTRIBUTE, example: 'level' }) attribute: string;
  @ApiProperty({ enum: ['gte', 'lt'], description: 'The attribute, a number, is >= (<) values[0]; anything but a number holds for neither' })
  operator: 'gte' | 'lt';
  @ApiProperty({ type: [Number], minItems: 1, maxItems: 1, example: [10] }) values: number[];
}

export class VersionConditionDto {
  @ApiProperty({ ...ATTRIBUTE, example: 'build' }) attribute: string;
  @ApiProperty({
    enum: ['semverGte', 'semverLt'],
    description:
      'The attribute, a semantic version string (1.4.2, 1.4), is >= (<) values[0] by SemVer 2.0.0 precedence; anything else holds for neither',
  })
  operator: 'semverGte' | 'semverLt';
  @ApiProperty({ type: [String], minItems: 1, maxItems: 1, example: ['1.4'], description: 'One semantic version' }) values: string[];
}

export class PercentageConditionDto {
  @ApiProperty({ ...ATTRIBUTE, example: 'targetingKey' }) attribute: string;
  @ApiProperty({
    enum: ['percentage'],
    description:
      "The attribute's bucket for this flag is in [from, to): SHA-256 of `<flag key>:<value>`, first 4 bytes big-endian, modulo 10,000, divided by 100",
  })
  operator: 'percentage';
  @ApiProperty({
    type: 'array',
    items: { type: 'number', minimum: 0, maximum: 100 },
    minItems: 2,
    maxItems: 2,
    example: [0, 10],
    description: '[from, to] with 0 <= from < to <= 100: [0, 10] is a 10 % rollout, [10, 20] the next 10 %',
  })
  values: [number, number];
}

const CONDITION_SCHEMAS = [ListConditionDto, NumberConditionDto, VersionConditionDto, PercentageConditionDto];

@ApiExtraModels(...CONDITION_SCHEMAS)
export class FlagRuleDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 64,
    pattern: RULE_ID_PATTERN.source,
    description: 'Unique in the flag; OFREP reports it as the variant',
    example: 'eu-canary',
  })
  id: string;

  @ApiProperty({
    type: 'array',
    minItems: 1,
    maxItems: MAX_CONDITIONS,
    items: { oneOf: CONDITION_SCHEMAS.map((schema) => ({ $ref: getSchemaPath(schema) })) },
    description: 'All must hold for the rule to match',
  })
  conditions: (ListConditionDto | NumberConditionDto | VersionConditionDto | PercentageConditionDto)[];

  @ApiProperty({
    ...JSON_VALUE_SCHEMA,
    required: true,
    description: "The value served when the rule matches: the flag's type rules apply (4 KB, 4 levels)",
  } as ApiPropertyOptions)
  value: unknown;
}

export const RULES_EXAMPLE: FlagRule[] = [
  { id: 'eu-servers', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west', 'eu-central'] }], value: true },
  {
    id: 'canary',
    conditions: [
      { attribute: 'serverId', operator: 'percentage', values: [0, 10] },
      { attribute: 'build', operator: 'semverGte', values: ['1.4'] },
    ],
    value: true,
  },
];

/** The `rules` property of a flag's answers and inputs. */
export function rulesProperty(description: string): ApiPropertyOptions {
  return { type: [FlagRuleDto], required: false, maxItems: MAX_RULES, description, example: RULES_EXAMPLE };
}

/** The rules fit the sibling `type` field (when the body has none, the flag's stored type is checked by the service). */
export function IsFlagRules() {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isFlagRules',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (rules: unknown, args: ValidationArguments) => flagRulesError((args.object as { type?: unknown }).type, rules) === null,
        defaultMessage: (args: ValidationArguments) => flagRulesError((args.object as { type?: unknown }).type, args.value) ?? 'rules are invalid',
      },
    });
}
