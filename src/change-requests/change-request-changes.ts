import { BadRequestException } from '@nestjs/common';
import { jsonEqual } from '../common/canonical-json';
import { Flag, FLAG_KEY_PATTERN, FlagSnapshot, snapshotOf } from '../flags/flag.model';
import { validFlagEntry } from '../flags/flag-transfer.service';
import { ChangeRequestsErrors } from './change-requests.errors';
import { ChangeRow } from './change-requests.repository';
import { StaleFlagDto } from './dto/change-request.dto';

// A request's changes as rules: what a body proposes, each flag's state when it was made, and what moved on since.

/** A change as proposed: the key, and the whole state (null: delete the flag). */
export interface Proposed {
  key: string;
  after: FlagSnapshot | null;
}

const SNAPSHOT_FIELDS = ['name', 'description', 'type', 'value', 'runtime', 'archived', 'rules'] as const;

/** The changes with each flag's state and version now (a create's: none); a delete of a key with no flag is a 400. */
export function withBefore(proposed: readonly Proposed[], flags: readonly Flag[]): ChangeRow[] {
  const byKey = new Map(flags.map((flag) => [flag.key, flag]));
  return proposed.map(({ key, after }, index) => {
    const flag = byKey.get(key);
    if (!flag && after === null) throw ChangeRequestsErrors.invalid(`changes[${index}] ("${key}"): there is no flag "${key}" to delete`);
    return flag
      ? { key, flagId: flag.id, before: snapshotOf(flag), after, version: flag.version }
      : { key, flagId: null, before: null, after, version: null };
  });
}

/** The flags that moved on since the request was made: another version, deleted, or created under a key it creates. */
export function staleOf(changes: readonly ChangeRow[], flags: readonly Flag[]): StaleFlagDto[] {
  const byKey = new Map(flags.map((flag) => [flag.key, flag]));
  const stale: StaleFlagDto[] = [];
  for (const change of changes) {
    const flag = byKey.get(change.key);
    if (change.flagId === null) {
      if (flag) stale.push({ key: change.key, flagId: flag.id, requestedVersion: null, currentVersion: flag.version, fields: ['exists'] });
      continue;
    }
    if (!flag || flag.id !== change.flagId) {
      stale.push({ key: change.key, flagId: change.flagId, requestedVersion: change.version, currentVersion: null, fields: ['exists'] });
      continue;
    }
    if (flag.version === change.version) continue;
    const now = snapshotOf(flag) as unknown as Record<string, unknown>;
    const then = (change.before ?? {}) as unknown as Record<string, unknown>;
    const fields = SNAPSHOT_FIELDS.filter((field) => !jsonEqual(now[field] ?? null, then[field] ?? null));
    stale.push({ key: change.key, flagId: flag.id, requestedVersion: change.version, currentVersion: flag.version, fields });
  }
  return stale;
}

/**
 * Each change checked: `{key, after}`, keys unique, `after` a whole flag state by the rules a create or an import
 * applies (ExportedFlagDto's), or null; a 400 naming the change (index and key) and the field.
 */
export async function validChanges(raw: readonly unknown[]): Promise<Proposed[]> {
  const proposed: Proposed[] = [];
  const seen = new Set<string>();
  for (const [index, change] of raw.entries()) {
    let where = `changes[${index}]`;
    if (typeof change !== 'object' || change === null || Array.isArray(change))
      throw new BadRequestException(`${where} must be an object {key, after}`);
    const unknownField = Object.keys(change).find((field) => field !== 'key' && field !== 'after');
    if (unknownField !== undefined) throw new BadRequestException(`${where}: property ${unknownField} should not exist`);
    const { key, after } = change as { key?: unknown; after?: unknown };
    if (typeof key !== 'string' || key.length < 1 || key.length > 64 || !FLAG_KEY_PATTERN.test(key)) {
      throw new BadRequestException(`${where}.key must be a flag key: 1-64 characters matching ^[a-z0-9][a-z0-9_-]*$`);
    }
    where = `changes[${index}] ("${key}")`;
    if (seen.has(key)) throw new BadRequestException(`${where}: key "${key}" is in changes twice`);
    seen.add(key);
    if (after === undefined) throw new BadRequestException(`${where}.after must be the flag's whole proposed state, or null to delete it`);
    if (after === null) {
      proposed.push({ key, after: null });
      continue;
    }
    if (typeof after !== 'object' || Array.isArray(after)) throw new BadRequestException(`${where}.after must be an object or null`);
    if (Object.hasOwn(after, 'key')) throw new BadRequestException(`${where}.after: property key should not exist (the change's key names the flag)`);
    const { key: _key, ...state } = await validFlagEntry({ ...after, key }, `${where}.after`);
    proposed.push({ key, after: state });
  }
  return proposed;
}
