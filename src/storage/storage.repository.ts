import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { StorageItemEntity, StorageMetadata } from './storage-item.entity';
import { StorageKind } from './storage-kind';

export interface NewStorageItem {
  id: string;
  organizationId: string;
  kind: StorageKind;
  size: number;
  contentType: string;
  metadata: StorageMetadata | null;
  objectKey: string;
}

export interface ItemFilter {
  kind?: StorageKind;
  before?: Date;
  after?: Date;
}

export interface KindUsage {
  kind: StorageKind;
  count: number;
  size: number;
}

type Row = Record<string, unknown>;

/**
 * Data access for storage items and upload nonces. Every read of tenant data takes the organization id.
 * State changes are single conditional statements, so two requests racing on one item cannot both win.
 */
@Injectable()
export class StorageRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  private async query(sql: string, parameters: unknown[]): Promise<Row[]> {
    const result: unknown = await this.txHost.tx.query(sql, parameters);
    // TypeORM's postgres driver answers UPDATE and DELETE (RETURNING or not) with [rows, affectedCount] and
    // everything else with rows (PostgresQueryRunner.query). Unwrapped here so that every method reads rows.
    // A SELECT or INSERT result cannot take this shape: its elements are row objects, never a number.
    if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
      return result[0] as Row[];
    }
    return result as Row[];
  }

  async createPending(item: NewStorageItem, uploadExpiresAt: Date): Promise<StorageItemEntity> {
    const rows = await this.query(
      `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, object_key, state, upload_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8) RETURNING *`,
      [item.id, item.organizationId, item.kind, item.size, item.contentType, jsonOrNull(item.metadata), item.objectKey, uploadExpiresAt],
    );
    return toEntity(rows[0]);
  }

  async createComplete(item: NewStorageItem, checksum: string): Promise<StorageItemEntity> {
    const rows = await this.query(
      `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, object_key, state, checksum, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'complete', $8, clock_timestamp()) RETURNING *`,
      [item.id, item.organizationId, item.kind, item.size, item.contentType, jsonOrNull(item.metadata), item.objectKey, checksum],
    );
    return toEntity(rows[0]);
  }

  /** Marks an upload to a pending item as under way; null when the item is gone, complete or already claimed. */
  async claimPending(organizationId: string, itemId: string): Promise<StorageItemEntity | null> {
    const rows = await this.query(
      `UPDATE storage_items SET upload_claimed_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND state = 'pending' AND upload_claimed_at IS NULL
       RETURNING *`,
      [itemId, organizationId],
    );
    return rows[0] ? toEntity(rows[0]) : null;
  }

  /** A failed upload gives the URL back, so the client can retry it until it expires. */
  async releaseClaim(organizationId: string, itemId: string): Promise<void> {
    await this.query(
      `UPDATE storage_items SET upload_claimed_at = NULL WHERE id = $1 AND organization_id = $2 AND state = 'pending'`,
      [itemId, organizationId],
    );
  }

  /** null when the item was deleted or purged while its bytes were streaming. */
  async completePending(organizationId: string, itemId: string, checksum: string): Promise<StorageItemEntity | null> {
    const rows = await this.query(
      `UPDATE storage_items SET state = 'complete', checksum = $3, completed_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND state = 'pending'
       RETURNING *`,
      [itemId, organizationId, checksum],
    );
    return rows[0] ? toEntity(rows[0]) : null;
  }

  /** Claims a non-allocated URL's nonce; false when another upload already used it. */
  async claimNonce(organizationId: string, nonce: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.query(
      `INSERT INTO storage_upload_nonces (nonce, organization_id, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (nonce) DO NOTHING RETURNING nonce`,
      [nonce, organizationId, expiresAt],
    );
    return rows.length === 1;
  }

  async releaseNonce(organizationId: string, nonce: string): Promise<void> {
    await this.query(`DELETE FROM storage_upload_nonces WHERE nonce = $1 AND organization_id = $2`, [nonce, organizationId]);
  }

  async findItem(organizationId: string, itemId: string): Promise<StorageItemEntity | null> {
    const rows = await this.query(`SELECT * FROM storage_items WHERE id = $1 AND organization_id = $2`, [itemId, organizationId]);
    return rows[0] ? toEntity(rows[0]) : null;
  }

  async findCompleteItem(organizationId: string, itemId: string): Promise<StorageItemEntity | null> {
    const rows = await this.query(
      `SELECT * FROM storage_items WHERE id = $1 AND organization_id = $2 AND state = 'complete'`,
      [itemId, organizationId],
    );
    return rows[0] ? toEntity(rows[0]) : null;
  }

  /** Newest first, ties broken by id so pages never overlap. */
  async listItems(
    organizationId: string,
    kind: StorageKind | undefined,
    offset: number,
    limit: number,
  ): Promise<{ items: StorageItemEntity[]; total: number }> {
    const [where, parameters] = filterClause(organizationId, { kind });
    const [rows, [{ total }]] = await Promise.all([
      this.query(
        `SELECT * FROM storage_items WHERE ${where} ORDER BY created_at DESC, id DESC
         LIMIT $${parameters.length + 1} OFFSET $${parameters.length + 2}`,
        [...parameters, limit, offset],
      ),
      this.query(`SELECT count(*)::int AS total FROM storage_items WHERE ${where}`, parameters),
    ]);
    return { items: rows.map(toEntity), total: total as number };
  }

  /** Count and bytes of complete items per kind (kinds without items are absent). */
  async usageByKind(organizationId: string): Promise<KindUsage[]> {
    const rows = await this.query(
      `SELECT kind, count(*)::int AS count, coalesce(sum(size), 0)::text AS size
       FROM storage_items WHERE organization_id = $1 AND state = 'complete' GROUP BY kind`,
      [organizationId],
    );
    return rows.map((row) => ({ kind: row.kind as StorageKind, count: row.count as number, size: Number(row.size) }));
  }

  /** Deletes the row and returns its object key, for the caller to delete the bytes after. */
  async deleteItem(organizationId: string, itemId: string): Promise<string | null> {
    const rows = await this.query(
      `DELETE FROM storage_items WHERE id = $1 AND organization_id = $2 RETURNING object_key`,
      [itemId, organizationId],
    );
    return rows[0] ? (rows[0].object_key as string) : null;
  }

  async countItems(organizationId: string, filter: ItemFilter): Promise<number> {
    const [where, parameters] = filterClause(organizationId, filter);
    const [{ count }] = await this.query(`SELECT count(*)::int AS count FROM storage_items WHERE ${where}`, parameters);
    return count as number;
  }

  /** Deletes every matching row and returns their object keys. */
  async deleteItems(organizationId: string, filter: ItemFilter): Promise<string[]> {
    const [where, parameters] = filterClause(organizationId, filter);
    const rows = await this.query(`DELETE FROM storage_items WHERE ${where} RETURNING object_key`, parameters);
    return rows.map((row) => row.object_key as string);
  }

  /**
   * Sweeper: deletes pending items whose URL expired before `expiredBefore` and that no upload is streaming
   * into (or whose upload claim is older than `staleClaimBefore`, left by a crash). Returns their object keys.
   */
  async deleteExpiredPending(expiredBefore: Date, staleClaimBefore: Date, limit: number): Promise<string[]> {
    const rows = await this.query(
      `DELETE FROM storage_items WHERE id IN (
         SELECT id FROM storage_items
         WHERE state = 'pending' AND upload_expires_at < $1
           AND (upload_claimed_at IS NULL OR upload_claimed_at < $2)
         LIMIT $3
       ) AND state = 'pending' RETURNING object_key`,
      [expiredBefore, staleClaimBefore, limit],
    );
    return rows.map((row) => row.object_key as string);
  }

  /** Sweeper: nonces matter only while their URL could still be used. */
  async deleteExpiredNonces(expiredBefore: Date): Promise<number> {
    const rows = await this.query(`DELETE FROM storage_upload_nonces WHERE expires_at < $1 RETURNING nonce`, [expiredBefore]);
    return rows.length;
  }

  /** Sweeper: which of these item ids still have a row (any organization: the sweep is not a tenant read). */
  async existingItemIds(itemIds: string[]): Promise<Set<string>> {
    if (itemIds.length === 0) return new Set();
    const rows = await this.query(`SELECT id FROM storage_items WHERE id = ANY($1::uuid[])`, [itemIds]);
    return new Set(rows.map((row) => row.id as string));
  }
}

function filterClause(organizationId: string, filter: ItemFilter): [string, unknown[]] {
  const conditions = ['organization_id = $1'];
  const parameters: unknown[] = [organizationId];
  if (filter.kind) {
    parameters.push(filter.kind);
    conditions.push(`kind = $${parameters.length}`);
  }
  if (filter.before) {
    parameters.push(filter.before);
    conditions.push(`created_at < $${parameters.length}`);
  }
  if (filter.after) {
    parameters.push(filter.after);
    conditions.push(`created_at > $${parameters.length}`);
  }
  return [conditions.join(' AND '), parameters];
}

function jsonOrNull(metadata: StorageMetadata | null): string | null {
  return metadata === null ? null : JSON.stringify(metadata);
}

function toEntity(row: Row): StorageItemEntity {
  const entity = new StorageItemEntity();
  entity.id = row.id as string;
  entity.organizationId = row.organization_id as string;
  entity.kind = row.kind as StorageKind;
  entity.size = Number(row.size);
  entity.contentType = row.content_type as string;
  entity.state = row.state as StorageItemEntity['state'];
  entity.metadata = (row.metadata as StorageMetadata | null) ?? null;
  entity.objectKey = row.object_key as string;
  entity.checksum = (row.checksum as string | null) ?? null;
  entity.uploadExpiresAt = (row.upload_expires_at as Date | null) ?? null;
  entity.uploadClaimedAt = (row.upload_claimed_at as Date | null) ?? null;
  entity.createdAt = row.created_at as Date;
  entity.completedAt = (row.completed_at as Date | null) ?? null;
  return entity;
}
