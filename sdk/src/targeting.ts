import * as crypto from 'node:crypto';

/*
 * Targeting, evaluated on the game server: this package's own copy of the service's evaluator (the SDK ships alone),
 * held to the same answers by the shared test vectors (test/fixtures/targeting-vectors.json in the service's
 * repository). The first rule whose conditions all hold gives its value; none holding, the flag's own value.
 */

/** The attributes rules read: the client's default context (serverId, region, build, …) extended by each call's. */
export type EvaluationContext = Readonly<Record<string, unknown>>;

export interface RuleCondition {
  attribute: string;
  /** in, notIn, gte, lt, semverGte, semverLt, percentage; a newer service's operator this SDK does not know never holds. */
  operator: string;
  values: readonly (string | number)[];
}

export interface FlagRule<V = unknown> {
  id: string;
  conditions: readonly RuleCondition[];
  value: V;
}

export type EvaluationReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT';

export interface Evaluation<V = unknown> {
  value: V;
  reason: EvaluationReason;
  /** The matching rule's id, or `default`. */
  variant: string;
}

export interface EvaluableFlag<V = unknown> {
  key: string;
  value: V;
  rules?: readonly FlagRule<V>[];
}

export function evaluateFlag<V>(flag: EvaluableFlag<V>, context: EvaluationContext): Evaluation<V> {
  const { rules } = flag;
  if (rules === undefined || rules.length === 0) return { value: flag.value, reason: 'STATIC', variant: 'default' };
  rules: for (const rule of rules) {
    for (const condition of rule.conditions) if (!conditionHolds(flag.key, condition, context)) continue rules;
    const split = rule.conditions.some((condition) => condition.operator === 'percentage');
    return { value: rule.value, reason: split ? 'SPLIT' : 'TARGETING_MATCH', variant: rule.id };
  }
  return { value: flag.value, reason: 'DEFAULT', variant: 'default' };
}

/** SHA-256 of the UTF-8 `<flag key>:<value>`, first 4 bytes as an unsigned big-endian integer, modulo 10,000, / 100. */
export function bucketOf(flagKey: string, value: string): number {
  return (sha256(`${flagKey}:${value}`).readUInt32BE(0) % 10_000) / 100;
}

/** Node's one-shot hash (20.12 and later) is twice as fast as a Hash object; older 20.x get the object. */
const sha256: (text: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest();

function conditionHolds(flagKey: string, condition: RuleCondition, context: EvaluationContext): boolean {
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
      return typeof actual === 'number' && typeof first === 'number' && actual >= first;
    case 'lt':
      return typeof actual === 'number' && typeof first === 'number' && actual < first;
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
      if (text === null || typeof first !== 'number' || typeof second !== 'number') return false;
      const bucket = bucketOf(flagKey, text);
      return first <= bucket && bucket < second;
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

/* Semantic Versioning 2.0.0 precedence, a missing minor or patch counted as 0; build metadata ignored. */
const VERSION =
  /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const NUMERIC = /^\d+$/;

interface Version {
  core: [number, number, number];
  prerelease: string[];
}

function parseVersion(text: unknown): Version | null {
  if (typeof text !== 'string' || text.length > 256) return null;
  const match = VERSION.exec(text);
  if (!match) return null;
  const prerelease = match[4] === undefined ? [] : match[4].split('.');
  if (prerelease.some((id) => NUMERIC.test(id) && id.length > 1 && id.startsWith('0'))) return null;
  const core = [match[1], match[2] ?? '0', match[3] ?? '0'].map(Number) as [number, number, number];
  if (!core.every(Number.isSafeInteger)) return null;
  return { core, prerelease };
}

function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i] - b.core[i];
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifiers(a.prerelease[i], b.prerelease[i]);
    if (order !== 0) return order;
  }
  return a.prerelease.length - b.prerelease.length;
}

function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
