import { Injectable } from '@nestjs/common';
import { pagedRows } from '../database/paged-rows';
import { Db, isUniqueViolation, Transaction } from '../database/sql';
import { containsPattern } from '../common/like-pattern';
import { Flag, FlagRuntime, FlagSnapshot, FlagType, withRules } from './flag.model';
import { FlagRule } from './targeting/flag-rules';

export interface NewFlag extends FlagSnapshot {
  key: string;
}

/** What the config payload serves of a flag: its rules only when it has any. */
export interface ConfigEntry {
  key: string;
  type: FlagType;
  value: unknown;
  runtime: FlagRuntime;
  rules?: FlagRule[];
}

/** The flags a config payload is built from, and the config version they are at. */
export interface VersionedConfig {
  version: number;
  entries: ConfigEntry[];
}

const COLUMNS = `id, organization_id AS "organizationId", key, name, description, type, value, runtime, archived, rules, version,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A row as read: `rules` is NULL for a flag without rules. */
type FlagRow = Omit<Flag, 'rules'> & { rules: FlagRule[] | null };

/** The stored flag: its rules in their documented order, and no `rules` field when it has none. */
function flagOf(row: FlagRow): Flag {
  const { rules, ...flag } = row;
  return withRules(flag, rules);
}

/** The rules column's parameter: NULL for none, so that a flag without rules stores no empty list. */
function rulesParameter(rules: readonly FlagRule[] | undefined): string | null {
  return rules && rules.length > 0 ? JSON.stringify(rules) : null;
}

const KEY_UNIQUE_CONSTRAINT = 'flags_organization_key_unique';

/**
 * Every query is scoped by organization: there is no way to reach another organization's flag. Values are
 * written as `$n::jsonb` text, so that a JSON `null` value is stored as jsonb 'null', not SQL NULL.
 * Each method runs on the `Db` it is given (see sql.ts).
 */
@Injectable()
export class FlagsRepository {
  /**
   * The change feed's source of config versions (ChangeSource.sql): the organizations whose flags a transaction with
   * an id of at least `$1` changed, with their version; nothing on a full read (`$2`: no payload is cached yet, or
   * every one is dropped).
   */
  static readonly CONFIG_VERSIONS_CHANGED_SINCE = `SELECT coalesce(json_agg(json_build_object('organizationId', organization_id, 'version', version)), '[]'::json)
    FROM config_versions WHERE NOT $2::boolean AND changed_xid >= $1::xid8`;

  /** The new flag, or null when the organization already has (or had, archived) a flag with that key. */
  async insert(db: Db, organizationId: string, flag: NewFlag): Promise<Flag | null> {
    try {
      const row = await db.row<FlagRow>(
        `INSERT INTO flags (organization_id, key, name, description, type, value, runtime, archived, rules)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9::jsonb) RETURNING ${COLUMNS}`,
        [
          organizationId,
          flag.key,
          flag.name,
          flag.description,
          flag.type,
          JSON.stringify(flag.value),
          flag.runtime,
          flag.archived,
          rulesParameter(flag.rules),
        ],
      );
      return row && flagOf(row);
    } catch (error) {
      if (isUniqueViolation(error, KEY_UNIQUE_CONSTRAINT)) return null;
      throw error;
    }
  }

  findById(db: Db, organizationId: string, flagId: string): Promise<Flag | null> {
    return this.find(db, organizationId, flagId, '');
  }

  /** The flag, with its row lock taken for the rest of the transaction. */
  findForUpdate(tx: Transaction, organizationId: string, flagId: string): Promise<Flag | null> {
    return this.find(tx, organizationId, flagId, 'FOR UPDATE');
  }

  /** Every flag of the organization, archived ones included, by key; in a transaction, with their row locks. */
  async all(db: Db, organizationId: string, lock: '' | 'FOR UPDATE' = ''): Promise<Flag[]> {
    const rows = await db.rows<FlagRow>(`SELECT ${COLUMNS} FROM flags WHERE organization_id = $1 ORDER BY key ${lock}`, [organizationId]);
    return rows.map(flagOf);
  }

  private async find(db: Db, organizationId: string, flagId: string, lock: '' | 'FOR UPDATE'): Promise<Flag | null> {
    const row = await db.row<FlagRow>(`SELECT ${COLUMNS} FROM flags WHERE organization_id = $1 AND id = $2 ${lock}`, [organizationId, flagId]);
    return row && flagOf(row);
  }

  /** Writes the flag's new state, its row version one more (every write of a flag comes here). */
  async update(db: Db, organizationId: string, flagId: string, state: FlagSnapshot): Promise<Flag> {
    const row = await db.row<FlagRow>(
      `UPDATE flags SET name = $3, description = $4, type = $5, value = $6::jsonb, runtime = $7, archived = $8, rules = $9::jsonb,
         version = version + 1, updated_at = clock_timestamp()
       WHERE organization_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [
        organizationId,
        flagId,
        state.name,
        state.description,
        state.type,
        JSON.stringify(state.value),
        state.runtime,
        state.archived,
        rulesParameter(state.rules),
      ],
    );
    if (!row) throw new Error(`Flag ${flagId} vanished under its row lock`);
    return flagOf(row);
  }

  async delete(db: Db, organizationId: string, flagId: string): Promise<void> {
    await db.rows('DELETE FROM flags WHERE organization_id = $1 AND id = $2', [organizationId, flagId]);
  }

  async list(
    db: Db,
    organizationId: string,
    filter: { search?: string; includeArchived: boolean; offset: number; limit: number },
  ): Promise<{ rows: Flag[]; total: number }> {
    const conditions = ['organization_id = $1'];
    const parameters: unknown[] = [organizationId];
    if (!filter.includeArchived) conditions.push('NOT archived');
    if (filter.search) {
      parameters.push(containsPattern(filter.search));
      conditions.push(`(key ILIKE $${parameters.length} OR name ILIKE $${parameters.length})`);
    }
    const where = conditions.join(' AND ');
    const { rows, total } = await pagedRows<FlagRow>(db, {
      columns: COLUMNS,
      table: 'flags',
      where,
      parameters,
      offset: filter.offset,
      limit: filter.limit,
    });
    return { rows: rows.map(flagOf), total };
  }

  /**
   * The organization's config as of one snapshot: every non-archived flag, ordered by key bytewise so the order never
   * depends on the database's locale, and the config version those flags are at (0 before the first change). One
   * statement, so the version and the flags always belong together.
   */
  async versionedConfig(db: Db, organizationId: string): Promise<VersionedConfig> {
    const rows = await db.rows<Omit<ConfigEntry, 'rules'> & { rules: FlagRule[] | null; version: string }>(
      `SELECT v.version, f.key, f.type, f.value, f.runtime, f.rules
       FROM (SELECT coalesce(max(version), 0) AS version FROM config_versions WHERE organization_id = $1) v
       LEFT JOIN flags f ON f.organization_id = $1 AND NOT f.archived
       ORDER BY f.key COLLATE "C"`,
      [organizationId],
    );
    const entries = rows
      .filter((row) => row.key !== null)
      .map(({ key, type, value, runtime, rules }) => withRules({ key, type, value, runtime }, rules));
    return { version: Number(rows[0].version), entries };
  }

  /** A change of the organization's flags, in its transaction: the config version moves with it (see versionedConfig). */
  async bumpConfigVersion(tx: Transaction, organizationId: string): Promise<void> {
    await tx.rows(
      `INSERT INTO config_versions (organization_id, version, changed_xid) VALUES ($1, 1, pg_current_xact_id())
       ON CONFLICT (organization_id) DO UPDATE SET version = config_versions.version + 1, changed_xid = excluded.changed_xid`,
      [organizationId],
    );
  }
}
