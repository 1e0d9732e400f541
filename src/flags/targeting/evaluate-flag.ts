import { createHash } from 'node:crypto';
import { FlagRule, RuleCondition } from './flag-rules';
import { compareVersions, parseVersion } from './semantic-version';

/**
 * The evaluator (decisions.md, "Targeting"): a pure function of a flag and a context, used by OFREP and the evaluate
 * route. The SDK ships its own copy (sdk/src/targeting.ts); both pass test/fixtures/targeting-vectors.json.
 */
export type EvaluationReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT';
export const EVALUATION_REASONS: readonly EvaluationReason[] = ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT'];
export const DEFAULT_VARIANT = 'default';

export interface Evaluation {
  value: unknown;
  reason: EvaluationReason;
  /** The matching rule's id, or `default`. */
  variant: string;
}

/** What evaluation reads of a flag: its key (the bucket's salt), its default value and its rules. */
export interface EvaluableFlag {
  key: string;
  value: unknown;
  rules?: readonly FlagRule[];
}

export type EvaluationContext = Readonly<Record<string, unknown>>;

/** The first rule whose conditions all hold gives the value; none holding, the flag's own value. */
export function evaluateFlag(flag: EvaluableFlag, context: EvaluationContext): Evaluation {
  const { rules } = flag;
  if (rules === undefined || rules.length === 0) return { value: flag.value, reason: 'STATIC', variant: DEFAULT_VARIANT };
  for (const rule of rules) {
    if (rule.conditions.every((condition) => conditionHolds(flag.key, condition, context))) {
      const split = rule.conditions.some((condition) => condition.operator === 'percentage');
      return { value: rule.value, reason: split ? 'SPLIT' : 'TARGETING_MATCH', variant: rule.id };
    }
  }
  return { value: flag.value, reason: 'DEFAULT', variant: DEFAULT_VARIANT };
}

/**
 * A value's bucket for a flag, the same in every implementation: SHA-256 of the UTF-8 `<flag key>:<value>`, its
 * first 4 bytes as an unsigned big-endian integer, modulo 10,000, divided by 100: a number in [0, 100).
 */
export function bucketOf(flagKey: string, value: string): number {
  return (createHash('sha256').update(`${flagKey}:${value}`, 'utf8').digest().readUInt32BE(0) % 10_000) / 100;
}

export function conditionHolds(flagKey: string, condition: RuleCondition, context: EvaluationContext): boolean {
  // Own keys only: a context never reaches Object.prototype's `constructor` or `toString`.
  const actual = Object.hasOwn(context, condition.attribute) ? context[condition.attribute] : undefined;
  const [first, second] = condition.values;
  switch (condition.operator) {
    case 'in': {
      const text = stringForm(actual);
      return text !== null && condition.values.includes(text);
    }
    case 'notIn': {
      const text = stringForm(actual);
      return text === null || !condition.values.includes(text);
    }
    case 'gte':
      return typeof actual === 'number' && actual >= (first as number);
    case 'lt':
      return typeof actual === 'number' && actual < (first as number);
    case 'semverGte':
    case 'semverLt': {
      const version = parseVersion(actual);
      const bound = parseVersion(first);
      if (version === null || bound === null) return false;
      const order = compareVersions(version, bound);
      return condition.operator === 'semverGte' ? order >= 0 : order < 0;
    }
    case 'percentage': {
      const text = stringForm(actual);
      if (text === null) return false;
      const bucket = bucketOf(flagKey, text);
      return (first as number) <= bucket && bucket < (second as number);
    }
    default:
      return false;
  }
}

/** A string as is, a number as JSON writes it, true or false; null for anything else (missing, null, an object). */
function stringForm(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : null;
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return null;
  }
}
