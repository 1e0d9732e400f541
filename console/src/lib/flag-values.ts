/** The service's value rules (decisions.md 2.4), checked as a person types: the same limits, the same words. */
export const MAX_VALUE_BYTES = 4096;
export const MAX_VALUE_DEPTH = 4;

export type FlagType = 'boolean' | 'string' | 'number' | 'json';
export const FLAG_TYPES: FlagType[] = ['boolean', 'string', 'number', 'json'];

/**
 * What a flag's runtime decides, said where it is chosen (the API's description says the same): both reach the game
 * servers; only `shared` may go on to the players' game clients.
 */
export const RUNTIME_HELP =
  'Who may read the flag. Shared: game servers get it and may pass it on to players’ game clients, so players can see it. ' +
  'Server: only game servers get it; choose it for secrets and anything players must not see.';

/** Containers deep: `{"a": 1}` is 1, `{"a": {"b": 1}}` is 2 (as the service counts). */
export function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}

/** Why a value cannot be a flag value of `type`, or null when it can. */
export function valueProblem(type: FlagType, value: unknown): string | null {
  if (type === 'boolean' && typeof value !== 'boolean') return 'The value must be true or false.';
  if (type === 'number' && (typeof value !== 'number' || !Number.isFinite(value))) return 'The value must be a finite number.';
  if (type === 'string' && typeof value !== 'string') return 'The value must be text.';
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_VALUE_BYTES) return `The value is ${bytes} bytes; at most ${MAX_VALUE_BYTES} are allowed.`;
  if (depthOf(value) > MAX_VALUE_DEPTH) return `The value nests ${depthOf(value)} levels deep; at most ${MAX_VALUE_DEPTH} are allowed.`;
  return null;
}

/** A JSON editor's text as a value, or why it is not one (not JSON, too big, too deep). */
export function parseJsonValue(text: string): { value: unknown; problem: null } | { value: undefined; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { value: undefined, problem: `Not valid JSON: ${(error as Error).message}` };
  }
  const problem = valueProblem('json', value);
  return problem ? { value: undefined, problem } : { value, problem: null };
}

/** A number field's text as a number, or why it is not one. */
export function parseNumberValue(text: string): { value: number; problem: null } | { value: undefined; problem: string } {
  const trimmed = text.trim();
  const value = trimmed === '' ? Number.NaN : Number(trimmed);
  return Number.isFinite(value) ? { value, problem: null } : { value: undefined, problem: 'The value must be a finite number.' };
}

/** How a value reads in a list: short, on one line. */
export function preview(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
