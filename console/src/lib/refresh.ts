import { same } from './diff';

/** The fields of a flag's whole state, as a change request proposes it. */
export const STATE_FIELDS = ['name', 'description', 'type', 'value', 'runtime', 'archived', 'rules'] as const;

type State = Record<string, unknown>;

/**
 * A change request's proposal made again over its flag as it is now: the fields the request changes (its `after`
 * differs from its `before`) keep the proposal, every other field takes the flag's current state, so a refresh never
 * undoes a change somebody made meanwhile. No rules (absent or empty) is sent as absent.
 */
export function reproposed(before: State, after: State, current: State): State {
  const merged: State = {};
  for (const field of STATE_FIELDS) {
    const proposed = !same(before[field] ?? null, after[field] ?? null);
    const value = proposed ? after[field] : current[field];
    if (value === undefined) continue;
    if (field === 'rules' && Array.isArray(value) && value.length === 0) continue;
    merged[field] = value;
  }
  return merged;
}
