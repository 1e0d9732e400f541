import { Injectable } from '@nestjs/common';
import { Db } from '../database/sql';
import { ApiKey } from './api-key';
import { Permission } from './permission';

const API_KEY = `id, organization_id AS "organizationId", name, key_hash AS "keyHash", permissions,
  created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** Data access for API keys: issued and revoked by the admin API, looked up by the authenticator; on the `Db` it is given. */
@Injectable()
export class ApiKeysRepository {
  async createApiKey(db: Db, organizationId: string, name: string, keyHash: string, permissions: Permission[]): Promise<ApiKey> {
    const key = await db.row<ApiKey>(
      `INSERT INTO api_keys (organization_id, name, key_hash, permissions) VALUES ($1, $2, $3, $4) RETURNING ${API_KEY}`,
      [organizationId, name, keyHash, permissions],
    );
    return key!;
  }

  /** The active keys among `keyHashes`, in one query (the authenticator batches concurrent lookups). */
  findActiveApiKeysByHashes(db: Db, keyHashes: readonly string[]): Promise<ApiKey[]> {
    return db.rows<ApiKey>(`SELECT ${API_KEY} FROM api_keys WHERE key_hash = ANY($1::text[]) AND revoked_at IS NULL`, [keyHashes]);
  }

  /** The organization's key with this id while it is active (a stream token names a key by id). */
  findActiveApiKeyById(db: Db, organizationId: string, keyId: string): Promise<ApiKey | null> {
    return db.row<ApiKey>(`SELECT ${API_KEY} FROM api_keys WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL`, [keyId, organizationId]);
  }

  /** Marks the key revoked; false when the organization has no such active key. */
  async revokeApiKey(db: Db, organizationId: string, keyId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE api_keys SET revoked_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL RETURNING id`,
      [keyId, organizationId],
    );
    return rows.length > 0;
  }
}
