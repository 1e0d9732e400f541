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

/**
 * The label of one change. An edit touching several fields is labelled by the most significant one:
 * runtime > value (type and value) > archived state > name and description. Null when nothing changed.
 */
export function auditActionFor(before: FlagSnapshot | null, after: FlagSnapshot | null): AuditAction | null {
  if (!before && !after) return null;
  if (!before) return AuditAction.CREATE;
  if (!after) return AuditAction.DELETE;
  if (before.runtime !== after.runtime) return AuditAction.RUNTIME_SET;
  if (before.type !== after.type || !jsonEqual(before.value, after.value)) return AuditAction.VALUE_SET;
  if (before.archived !== after.archived) return after.archived ? AuditAction.ARCHIVE : AuditAction.UNARCHIVE;
  if (before.name !== after.name || before.description !== after.description) return AuditAction.UPDATE;
  return null;
}
