import { FlagRule, RuleCondition } from './targeting';
import { DEFAULT_POLL_INTERVAL_SECONDS } from './timing';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The types the service has today; a flag of a type this SDK does not know is kept (all() has it) but no getter matches it. */
export type FlagType = 'boolean' | 'string' | 'number' | 'json';

export interface Flag {
  key: string;
  type: FlagType | (string & {});
  value: JsonValue;
  /** `shared`: a server may relay it to players. `server`: it must stay on the server. Anything else is treated as `server`. */
  runtime: 'shared' | 'server' | (string & {});
  /** Targeting rules, when the flag has any: the client evaluates them against the context (never relay them to players). */
  rules?: FlagRule<JsonValue>[];
}

/** The body of GET /flags/config, which is also what the cache file holds. */
export interface ConfigPayload {
  /** The bare hash; the ETag header is `W/"<etag>"`. */
  etag: string;
  generatedAt: string;
  pollIntervalSeconds: number;
  flags: Flag[];
}

/**
 * Checks a config body (from the service or the cache file) and freezes it: values handed out by getJson() and
 * all() are the client's own, and a caller mutating one would otherwise change what every later read returns.
 * A payload with any malformed flag is refused as a whole, so the client keeps its last good one.
 */
export function parseConfigPayload(body: unknown): ConfigPayload {
  if (!isObject(body)) throw new Error('the config payload is not an object');
  const { etag, generatedAt, pollIntervalSeconds, flags } = body;
  if (typeof etag !== 'string' || etag === '') throw new Error('the config payload has no etag');
  if (!Array.isArray(flags)) throw new Error('the config payload has no flags array');
  const parsed = flags.map((flag, index) => parseFlag(flag, index));
  const keys = new Set(parsed.map((flag) => flag.key));
  if (keys.size !== parsed.length) throw new Error('the config payload holds a key twice');
  return deepFreeze({
    etag,
    generatedAt: typeof generatedAt === 'string' ? generatedAt : '',
    pollIntervalSeconds:
      typeof pollIntervalSeconds === 'number' && Number.isFinite(pollIntervalSeconds) && pollIntervalSeconds >= 1
        ? pollIntervalSeconds
        : DEFAULT_POLL_INTERVAL_SECONDS,
    flags: parsed,
  });
}

function parseFlag(flag: unknown, index: number): Flag {
  if (!isObject(flag)) throw new Error(`flag #${index} is not an object`);
  const { key, type, value, runtime, rules } = flag;
  if (typeof key !== 'string' || key === '') throw new Error(`flag #${index} has no key`);
  if (typeof type !== 'string') throw new Error(`flag ${key} has no type`);
  if (typeof runtime !== 'string') throw new Error(`flag ${key} has no runtime`);
  if (!matchesType(type, value)) throw new Error(`flag ${key}'s value is not a ${type}`);
  if (rules === undefined) return { key, type, value: value as JsonValue, runtime };
  if (!Array.isArray(rules)) throw new Error(`flag ${key}'s rules are not a list`);
  return { key, type, value: value as JsonValue, runtime, rules: rules.map((rule, at) => parseRule(key, type, rule, at)) };
}

/** A rule as the evaluator needs it; an operator this SDK does not know is kept (it never holds). */
function parseRule(key: string, type: string, rule: unknown, index: number): FlagRule<JsonValue> {
  const where = `flag ${key}'s rule #${index}`;
  if (!isObject(rule)) throw new Error(`${where} is not an object`);
  const { id, conditions, value } = rule;
  if (typeof id !== 'string') throw new Error(`${where} has no id`);
  if (!Array.isArray(conditions)) throw new Error(`${where} has no conditions`);
  if (!matchesType(type, value)) throw new Error(`${where}'s value is not a ${type}`);
  const parsed = conditions.map((condition): RuleCondition => {
    if (!isObject(condition)) throw new Error(`${where} has a condition that is not an object`);
    const { attribute, operator, values } = condition;
    if (typeof attribute !== 'string' || typeof operator !== 'string' || !Array.isArray(values)) {
      throw new Error(`${where} has a condition without attribute, operator or values`);
    }
    return { attribute, operator, values: values as (string | number)[] };
  });
  return { id, conditions: parsed, value: value as JsonValue };
}

/** Whether `value` may be served as a flag of `type`; a type this SDK does not know accepts any JSON value. */
export function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return value !== undefined;
  }
}

/** The keys whose type, value, runtime or rules differ between two payloads, or that only one of them has, in key order. */
export function changedKeys(before: ReadonlyMap<string, Flag>, after: ReadonlyMap<string, Flag>): string[] {
  const changed: string[] = [];
  for (const [key, flag] of after) {
    const previous = before.get(key);
    if (
      !previous ||
      previous.type !== flag.type ||
      previous.runtime !== flag.runtime ||
      !sameJson(previous.value, flag.value) ||
      !sameJson((previous.rules ?? []) as unknown as JsonValue, (flag.rules ?? []) as unknown as JsonValue)
    ) {
      changed.push(key);
    }
  }
  for (const key of before.keys()) if (!after.has(key)) changed.push(key);
  return changed.sort();
}

export function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
