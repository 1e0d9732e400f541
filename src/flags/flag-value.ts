export const MAX_VALUE_BYTES = 4096;
export const MAX_VALUE_DEPTH = 4;

/**
 * Why a value does not fit its flag type , or null when it does.
 * Depth counts containers: `{"a": 1}` is 1 level, `{"a": {"b": 1}}` is 2.
 */
export function flagValueError(type: unknown, value: unknown): string | null {
  if (value === undefined) return 'value is required';
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') return 'value must be a boolean (true or false) when type is boolean';
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'value must be a finite number when type is number';
      break;
    case 'string':
      if (typeof value !== 'string') return 'value must be a string when type is string';
      break;
    case 'json':
      break;
    default:
      return null; // the type field reports its own error
  }
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > MAX_VALUE_BYTES) return `value must be at most ${MAX_VALUE_BYTES} bytes when serialized (got ${bytes})`;
  if (depthOf(value) > MAX_VALUE_DEPTH) return `value must nest at most ${MAX_VALUE_DEPTH} levels deep`;
  return null;
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}
