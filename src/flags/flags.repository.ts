import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { QueryFailedError } from 'typeorm';
import { FlagRuntime, FlagSnapshot, FlagType } from '../audit/audit-action';

export interface FlagRow extends FlagSnapshot {
  id: string;
  organizationId: string;
  key: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewFlag extends FlagSnapshot {
  key: string;
}

export interface ConfigEntry {
  key: string;
  type: FlagType;
  value: unknown;
  runtime: FlagRuntime;
}

const COLUMNS = `id, organization_id AS "organizationId", key, name, description, type, value, runtime, archived,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const KEY_UNIQUE_CONSTRAINT = 'flags_organization_key_unique';

/** Every query is scoped by organization: there is no way to reach another organization's flag. */
@Injectable()
export class FlagsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  private query<T>(sql: string, parameters: unknown[]): Promise<T[]> {
    return this.txHost.tx.query(sql, parameters);
  }

  /** The new flag, or null when the organization already has (or had, archived) a flag with that key. */
  async insert(organizationId: string, flag: NewFlag): Promise<FlagRow | null> {
    try {
      const [row] = await this.query<FlagRow>(
        `INSERT INTO flags (organization_id, key, name, description, type, value, runtime, archived)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING ${COLUMNS}`,
        [organizationId, flag.key, flag.name, flag.description, flag.type, JSON.stringify(flag.value), flag.runtime, flag.archived],
      );
      return row;
    } catch (error) {
      if (isUniqueViolation(error, KEY_UNIQUE_CONSTRAINT)) return null;
      throw error;
    }
  }

  async findById(organizationId: string, flagId: string, options: { lock?: boolean } = {}): Promise<FlagRow | null> {
    const [row] = await this.query<FlagRow>(
      `SELECT ${COLUMNS} FROM flags WHERE organization_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
      [organizationId, flagId],
    );
    return row ?? null;
  }

  async update(organizationId: string, flagId: string, state: FlagSnapshot): Promise<FlagRow> {
    const [rows] = await this.query<FlagRow[]>(
      `UPDATE flags SET name = $3, description = $4, type = $5, value = $6::jsonb, runtime = $7, archived = $8,
         updated_at = clock_timestamp()
       WHERE organization_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [organizationId, flagId, state.name, state.description, state.type, JSON.stringify(state.value), state.runtime, state.archived],
    );
    // TypeORM's postgres driver answers an UPDATE ... RETURNING with [rows, affectedCount].
    return rows[0];
  }

  async delete(organizationId: string, flagId: string): Promise<void> {
    await this.query('DELETE FROM flags WHERE organization_id = $1 AND id = $2', [organizationId, flagId]);
  }

  async list(
    organizationId: string,
    filter: { search?: string; includeArchived: boolean; offset: number; limit: number },
  ): Promise<{ rows: FlagRow[]; total: number }> {
    const conditions = ['organization_id = $1'];
    const parameters: unknown[] = [organizationId];
    if (!filter.includeArchived) conditions.push('NOT archived');
    if (filter.search) {
      parameters.push(`%${escapeLike(filter.search)}%`);
      conditions.push(`(key ILIKE $${parameters.length} OR name ILIKE $${parameters.length})`);
    }
    const where = conditions.join(' AND ');
    const rows = await this.query<FlagRow & { total: number }>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM flags WHERE ${where}
       ORDER BY created_at DESC, id DESC OFFSET $${parameters.length + 1} LIMIT $${parameters.length + 2}`,
      [...parameters, filter.offset, filter.limit],
    );
    if (rows.length > 0 || filter.offset === 0) {
      return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total ?? 0 };
    }
    // Past the last page the window count has no row to ride on.
    const [{ total }] = await this.query<{ total: number }>(`SELECT count(*)::int AS total FROM flags WHERE ${where}`, parameters);
    return { rows: [], total };
  }

  /** Every non-archived flag, ordered by key bytewise so the order never depends on the database's locale. */
  configEntries(organizationId: string): Promise<ConfigEntry[]> {
    return this.query<ConfigEntry>(
      `SELECT key, type, value, runtime FROM flags WHERE organization_id = $1 AND NOT archived ORDER BY key COLLATE "C"`,
      [organizationId],
    );
  }
}

/** The fields the audit log records, taken from a stored flag. */
export function snapshotOf(row: FlagRow): FlagSnapshot {
  const { name, description, type, value, runtime, archived } = row;
  return { name, description, type, value, runtime, archived };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driverError = error instanceof QueryFailedError ? (error.driverError as { code?: string; constraint?: string }) : undefined;
  return driverError?.code === '23505' && driverError.constraint === constraint;
}
