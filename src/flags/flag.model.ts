import { jsonEqual } from '../common/canonical-json';

export enum AuditAction {
  CREATE = 'flag.create',
  UPDATE = 'flag.update',
  VALUE_SET = 'flag.value.set',
  RUNTIME_SET = 'flag.runtime.set',
  ARCHIVE = 'flag.archive',
  UNARCHIVE = 'flag.unarchive',
  DELETE = 'flag.delete',
}

export type FlagType = 'boolean' | 'string' | 'number' | 'json';
export type FlagRuntime = 'shared' | 'server';

/** The state of a flag as the audit log records it: every field, whichever one changed. */
export interface FlagSnapshot {
  name: string;
  description: string | null;
  type: FlagType;
  value: unknown;
  runtime: FlagRuntime;
  archived: boolean;
}

/** Which parts of a flag an edit changes; the audit label and the flag rules both read this. */
export interface FlagChanges {
  runtime: boolean;
  /** Type or value. */
  value: boolean;
  archived: boolean;
  /** Name or description. */
  details: boolean;
}

export function changesBetween(before: FlagSnapshot, after: FlagSnapshot): FlagChanges {
  return {
    runtime: before.runtime !== after.runtime,
    value: before.type !== after.type || !jsonEqual(before.value, after.value),
    archived: before.archived !== after.archived,
    details: before.name !== after.name || before.description !== after.description,
  };
}

/**
 * The label of one change. An edit touching several fields is labelled by the most significant one:
 * runtime > value (type and value) > archived state > name and description. Null when nothing changed.
 */
export function auditActionFor(before: FlagSnapshot | null, after: FlagSnapshot | null): AuditAction | null {
  if (!before && !after) return null;
  if (!before) return AuditAction.CREATE;
  if (!after) return AuditAction.DELETE;
  const changes = changesBetween(before, after);
  if (changes.runtime) return AuditAction.RUNTIME_SET;
  if (changes.value) return AuditAction.VALUE_SET;
  if (changes.archived) return after.archived ? AuditAction.ARCHIVE : AuditAction.UNARCHIVE;
  if (changes.details) return AuditAction.UPDATE;
  return null;
}
