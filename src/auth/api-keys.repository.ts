import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';
import { ApiKey } from './api-key';
import { Permission } from './permission';

const API_KEY = `id, organization_id AS "organizationId", name, key_hash AS "keyHash", permissions,
  created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** A key as the change feed reads it: issued (`live`) or revoked since the feed's last read. */
export interface ChangedApiKey {
  id: string;
  organizationId: string;
  keyHash: string;
  permissions: Permission[];
  live: boolean;
}

/** Data access for API keys: issued and revoked by the admin API, looked up by the authenticator; on the `Db` it is given. */
@Injectable()
export class ApiKeysRepository {
  /**
   * The change feed's source of keys (ChangeSource.sql): the keys issued or revoked by a transaction whose id is at
   * least `$1`, or on a full read (`$2`) every live key.
   */
  static readonly CHANGED_SINCE = `SELECT coalesce(json_agg(json_build_object('id', id, 'organizationId', organization_id, 'keyHash', key_hash,
      'permissions', permissions, 'live', revoked_at IS NULL)), '[]'::json)
    FROM api_keys WHERE ($2::boolean AND revoked_at IS NULL) OR (NOT $2::boolean AND changed_xid >= $1::xid8)`;

  async createApiKey(db: Db, organizationId: string, name: string, keyHash: string, permissions: Permission[]): Promise<ApiKey> {
    const key = await db.row<ApiKey>(
      `INSERT INTO api_keys (organization_id, name, key_hash, permissions) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY}`,
      [organizationId, name, keyHash, permissions],
    );
    return key!;
  }

  /** Marks the key revoked; false when the organization has no such active key. */
  async revokeApiKey(db: Db, organizationId: string, keyId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE api_keys SET revoked_at = clock_timestamp(), changed_xid = pg_current_xact_id()
       WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL RETURNING id`,
      [keyId, organizationId],
    );
    return rows.length > 0;
  }
}
