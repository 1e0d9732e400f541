import { hash } from 'node:crypto';
import { FlagRule, RuleCondition } from './flag-rules';
import { compareVersions, parseVersion, SemanticVersion } from './semantic-version';

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
  return outcomeOf(flag, matchingRuleIndex(flag, context));
}

/** The index of the first rule of `flag` whose conditions all hold for `context`; -1 when none does (or it has none). */
export function matchingRuleIndex(flag: EvaluableFlag, context: EvaluationContext): number {
  const { rules } = flag;
  if (rules === undefined) return -1;
  // Plain loops: OFREP runs this for every flag with rules of every bulk request.
  rules: for (let index = 0; index < rules.length; index++) {
    const { conditions } = rules[index];
    for (let at = 0; at < conditions.length; at++) if (!conditionHolds(flag.key, conditions[at], context)) continue rules;
    return index;
  }
  return -1;
}

/** What the flag gives when rule `index` matched (-1: none did): its value, reason and variant. */
export function outcomeOf(flag: EvaluableFlag, index: number): Evaluation {
  const { rules } = flag;
  if (rules === undefined || rules.length === 0) return { value: flag.value, reason: 'STATIC', variant: DEFAULT_VARIANT };
  if (index < 0) return { value: flag.value, reason: 'DEFAULT', variant: DEFAULT_VARIANT };
  const rule = rules[index];
  const split = rule.conditions.some((condition) => condition.operator === 'percentage');
  return { value: rule.value, reason: split ? 'SPLIT' : 'TARGETING_MATCH', variant: rule.id };
}

/**
 * A value's bucket for a flag, the same in every implementation: SHA-256 of the UTF-8 `<flag key>:<value>`, its
 * first 4 bytes as an unsigned big-endian integer, modulo 10,000, divided by 100: a number in [0, 100).
 */
export function bucketOf(flagKey: string, value: string): number {
  return (hash('sha256', `${flagKey}:${value}`, 'buffer').readUInt32BE(0) % 10_000) / 100;
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
      const bound = versionBound(condition);
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

const bounds = new WeakMap<RuleCondition, SemanticVersion | null>();

/** A version condition's bound, parsed once per condition object (a cached payload's conditions live as long as it). */
function versionBound(condition: RuleCondition): SemanticVersion | null {
  let bound = bounds.get(condition);
  if (bound === undefined) {
    bound = parseVersion(condition.values[0]);
    bounds.set(condition, bound);
  }
  return bound;
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
