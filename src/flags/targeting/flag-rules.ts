import { flagValueError } from '../flag-value';
import { parseVersion } from './semantic-version';

/** Targeting (decisions.md, "Targeting"): the first rule whose conditions all hold gives the value. */
export const CONDITION_OPERATORS = ['in', 'notIn', 'gte', 'lt', 'semverGte', 'semverLt', 'percentage'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface RuleCondition {
  /** A key of the evaluation context (`targetingKey`, `region`, `build`, …), read as is: a dot is part of the name. */
  attribute: string;
  operator: ConditionOperator;
  values: (string | number)[];
}

export interface FlagRule {
  id: string;
  conditions: RuleCondition[];
  value: unknown;
}

export const MAX_RULES = 20;
export const MAX_CONDITIONS = 10;
export const MAX_IN_VALUES = 100;
export const MAX_RULES_BYTES = 16 * 1024;
export const RULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const ATTRIBUTE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

const RULE_FIELDS = new Set(['id', 'conditions', 'value']);
const CONDITION_FIELDS = new Set(['attribute', 'operator', 'values']);

/**
 * Why `rules` cannot be a flag of `type`'s rules, naming the field (`rules[1].conditions[0].values`), or null when
 * they can. The one check of rules: create, PATCH and import all use it.
 */
export function flagRulesError(type: unknown, rules: unknown): string | null {
  if (!Array.isArray(rules)) return 'rules must be an array';
  if (rules.length > MAX_RULES) return `rules must hold at most ${MAX_RULES} rules (got ${rules.length})`;
  const ids = new Set<string>();
  for (const [index, rule] of rules.entries()) {
    const error = ruleError(type, rule, `rules[${index}]`);
    if (error) return error;
    const { id } = rule as FlagRule;
    if (ids.has(id)) return `rules[${index}].id "${id}" is used by an earlier rule: ids must be unique in the flag`;
    ids.add(id);
  }
  const bytes = Buffer.byteLength(JSON.stringify(rules), 'utf8');
  if (bytes > MAX_RULES_BYTES) return `rules must be at most ${MAX_RULES_BYTES} bytes when serialized (got ${bytes})`;
  return null;
}

function ruleError(type: unknown, rule: unknown, path: string): string | null {
  if (!isObject(rule)) return `${path} must be an object {id, conditions, value}`;
  const unknownField = Object.keys(rule).find((field) => !RULE_FIELDS.has(field));
  if (unknownField !== undefined) return `property ${path}.${unknownField} should not exist`;
  const { id, conditions, value } = rule;
  if (typeof id !== 'string' || id.length < 1 || id.length > 64 || !RULE_ID_PATTERN.test(id)) {
    return `${path}.id must be 1-64 characters matching ^[a-z0-9][a-z0-9_-]*$`;
  }
  if (!Array.isArray(conditions) || conditions.length < 1 || conditions.length > MAX_CONDITIONS) {
    return `${path}.conditions must be an array of 1 to ${MAX_CONDITIONS} conditions`;
  }
  for (const [index, condition] of conditions.entries()) {
    const error = conditionError(condition, `${path}.conditions[${index}]`);
    if (error) return error;
  }
  const valueError = flagValueError(type, value);
  return valueError === null ? null : `${path}.${valueError}`;
}

function conditionError(condition: unknown, path: string): string | null {
  if (!isObject(condition)) return `${path} must be an object {attribute, operator, values}`;
  const unknownField = Object.keys(condition).find((field) => !CONDITION_FIELDS.has(field));
  if (unknownField !== undefined) return `property ${path}.${unknownField} should not exist`;
  const { attribute, operator, values } = condition;
  if (typeof attribute !== 'string' || !ATTRIBUTE_PATTERN.test(attribute)) {
    return `${path}.attribute must be 1-64 characters of letters, digits, _, . and -`;
  }
  if (typeof operator !== 'string' || !(CONDITION_OPERATORS as readonly string[]).includes(operator)) {
    return `${path}.operator must be one of ${CONDITION_OPERATORS.join(', ')}`;
  }
  if (!Array.isArray(values)) return `${path}.values must be an array`;
  const at = `${path}.values`;
  switch (operator as ConditionOperator) {
    case 'in':
    case 'notIn':
      if (values.length < 1 || values.length > MAX_IN_VALUES || !values.every((item) => typeof item === 'string')) {
        return `${at} must hold 1 to ${MAX_IN_VALUES} strings for ${operator}`;
      }
      return null;
    case 'gte':
    case 'lt':
      if (values.length !== 1 || !isFiniteNumber(values[0])) return `${at} must hold exactly one number for ${operator}`;
      return null;
    case 'semverGte':
    case 'semverLt':
      if (values.length !== 1 || parseVersion(values[0]) === null) {
        return `${at} must hold exactly one semantic version (such as "1.4" or "1.4.2") for ${operator}`;
      }
      return null;
    case 'percentage': {
      const [from, to] = values as unknown[];
      if (values.length !== 2 || !isFiniteNumber(from) || !isFiniteNumber(to) || from < 0 || from >= to || to > 100) {
        return `${at} must be [from, to] with 0 <= from < to <= 100 for percentage`;
      }
      return null;
    }
  }
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Rules in their documented field order ({id, conditions: [{attribute, operator, values}], value}): jsonb keeps an
 * object's keys in an order of its own, and a client may send any.
 */
export function orderedRules(rules: readonly FlagRule[]): FlagRule[] {
  return rules.map(({ id, conditions, value }) => ({
    id,
    conditions: conditions.map(({ attribute, operator, values }) => ({ attribute, operator, values })),
    value,
  }));
}
