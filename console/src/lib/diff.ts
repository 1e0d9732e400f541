/** One difference between two JSON values, at a path such as `value.tiers[1]` or `rules[0].conditions`. */
export interface Difference {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/**
 * What changed from `before` to `after`, deepest first where both are objects (arrays of equal length index by
 * index; a changed length is one change of the whole array, which reads better than a cascade of shifted items).
 * Keys in sorted order, so the same change always reads the same.
 */
export function diff(before: unknown, after: unknown, path = ''): Difference[] {
  if (same(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const at = path ? `${path}.${key}` : key;
      if (!Object.hasOwn(after, key)) return [{ path: at, kind: 'removed' as const, before: before[key] }];
      if (!Object.hasOwn(before, key)) return [{ path: at, kind: 'added' as const, after: after[key] }];
      return diff(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((item, index) => diff(item, after[index], `${path}[${index}]`));
  }
  return [{ path: path || '(value)', kind: 'changed', before, after }];
}

/** Equal as JSON, whatever the order of object keys. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => same(item, b[index]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && same(a[key], b[key]));
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a diff shows it: JSON, short. */
export function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
