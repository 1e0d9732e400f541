import { jsonEqual } from '../common/canonical-json';
import { FlagRule, orderedRules } from './targeting/flag-rules';

export const FLAG_TYPES = ['boolean', 'string', 'number', 'json'] as const;
export type FlagType = (typeof FLAG_TYPES)[number];

/** `shared` flags may be relayed to players; `server` flags must never leave the game server. */
export const FLAG_RUNTIMES = ['shared', 'server'] as const;
export type FlagRuntime = (typeof FLAG_RUNTIMES)[number];

/** What a runtime decides, in the OpenAPI document wherever a flag's runtime is chosen or shown (the console says the same). */
export const RUNTIME_DESCRIPTION =
  "Who may read the flag. `shared`: game servers receive it and may relay it to players' game clients (the SDK's " +
  '`clientSafe()` passes on only these), so players can read it. `server`: game servers receive it too (the config poll and ' +
  'OFREP serve both) but must never forward it to a client. Create a flag that holds a secret, or that players must not see, ' +
  'as `server`.';

export const FLAG_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

/** The editable state of a flag: what the audit log records before and after every change. */
export interface FlagSnapshot {
  name: string;
  description: string | null;
  type: FlagType;
  value: unknown;
  runtime: FlagRuntime;
  archived: boolean;
  /** Targeting: present only when the flag has rules (never an empty list), so a flag without rules looks as the spec lists it. */
  rules?: FlagRule[];
}

/** A stored flag. */
export interface Flag extends FlagSnapshot {
  id: string;
  organizationId: string;
  key: string;
  /** The row version: 1 when made, one more on every write (FlagsRepository.update); the flag's ETag. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export function snapshotOf(flag: FlagSnapshot): FlagSnapshot {
  const { name, description, type, value, runtime, archived, rules } = flag;
  return withRules({ name, description, type, value, runtime, archived }, rules);
}

/**
 * `state` with `rules`, in their documented field order, when there are any; without the field when there are none
 * (undefined, null or []).
 */
export function withRules<T extends object>(state: T, rules: readonly FlagRule[] | null | undefined): T & { rules?: FlagRule[] } {
  return rules && rules.length > 0 ? { ...state, rules: orderedRules(rules) } : state;
}

/** Which parts of a flag an edit touches; the lock and archive rules and the audit label all read this. */
export interface FlagEdit {
  runtime: boolean;
  /** Type, value or rules: what the flag serves. */
  value: boolean;
  archived: boolean;
  /** Name or description. */
  details: boolean;
}

export function editBetween(before: FlagSnapshot, after: FlagSnapshot): FlagEdit {
  return {
    runtime: before.runtime !== after.runtime,
    value: before.type !== after.type || !jsonEqual(before.value, after.value) || !jsonEqual(before.rules ?? [], after.rules ?? []),
    archived: before.archived !== after.archived,
    details: before.name !== after.name || before.description !== after.description,
  };
}

/** The audit labels of flag changes. */
export enum FlagAction {
  CREATE = 'flag.create',
  UPDATE = 'flag.update',
  VALUE_SET = 'flag.value.set',
  RUNTIME_SET = 'flag.runtime.set',
  ARCHIVE = 'flag.archive',
  UNARCHIVE = 'flag.unarchive',
  DELETE = 'flag.delete',
}

/**
 * The label of one change. An edit touching several fields is labelled by the one that outranks the others:
 * runtime > value (type, value and rules) > archived state > name and description. Null when nothing changed.
 */
export function flagActionFor(before: FlagSnapshot | null, after: FlagSnapshot | null): FlagAction | null {
  if (!before && !after) return null;
  if (!before) return FlagAction.CREATE;
  if (!after) return FlagAction.DELETE;
  const edit = editBetween(before, after);
  if (edit.runtime) return FlagAction.RUNTIME_SET;
  if (edit.value) return FlagAction.VALUE_SET;
  if (edit.archived) return after.archived ? FlagAction.ARCHIVE : FlagAction.UNARCHIVE;
  if (edit.details) return FlagAction.UPDATE;
  return null;
}

/** One change to one flag, labelled, as the audit log records it. */
export interface FlagChange {
  organizationId: string;
  /** Null for a deletion: the entry outlives the row it would reference. */
  flagId: string | null;
  /** A deletion's flag, for the console's event stream (the audit entry keeps flagId null). */
  deletedFlagId?: string;
  flagKey: string;
  action: FlagAction;
  before: FlagSnapshot | null;
  after: FlagSnapshot | null;
  /** Why, when there is something to say (a restore, a schedule, an import); absent for an ordinary write. */
  context?: FlagChangeContext;
}

/**
 * An audit entry's `context` (decisions.md, "Audit entries say why"): the entry a restore went back to, the schedule
 * that applied a change, an import, or the change request applied.
 */
export type FlagChangeContext =
  | { restoredFrom: string }
  | { scheduleId: string }
  | { import: true }
  /** A change request's apply; an admin's apply without its approvals also gives the reason. */
  | { changeRequestId: string; override?: { reason: string } };

/** The labelled change from `before` to `after`, or null when the edit changes nothing. */
export function flagChange(
  organizationId: string,
  flagId: string | null,
  flagKey: string,
  before: FlagSnapshot | null,
  after: FlagSnapshot | null,
): FlagChange | null {
  const action = flagActionFor(before, after);
  return action ? { organizationId, flagId, flagKey, action, before, after } : null;
}
