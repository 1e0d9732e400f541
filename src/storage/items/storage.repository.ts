import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../../database/sql';
import { AllocationUsage } from '../storage.errors';
import { StorageItem, StorageMetadata } from './storage-item';
import { StorageKind } from './storage-kind';

export interface NewStorageItem {
  id: string;
  organizationId: string;
  kind: StorageKind;
  size: number;
  contentType: string;
  metadata: StorageMetadata | null;
  /** The name the upload gave the file; none when absent. */
  fileName?: string | null;
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

// size is a bigint, which pg hands over as a string; as float8 it arrives as a number, exact below 2^53.
const COLUMNS = `id, organization_id AS "organizationId", kind, size::float8 AS size, content_type AS "contentType", state,
  metadata, file_name AS "fileName", object_key AS "objectKey", checksum, upload_expires_at AS "uploadExpiresAt",
  upload_claimed_at AS "uploadClaimedAt", created_at AS "createdAt", completed_at AS "completedAt"`;

/** Complete bytes plus reserved pending bytes of organization $1 at time $2 (two index scans, no heap walk of the org). */
const RESERVED_BYTES = `
  (SELECT coalesce(sum(size), 0) FROM storage_items WHERE organization_id = $1 AND state = 'complete')
  + (SELECT coalesce(sum(size), 0) FROM storage_items
     WHERE organization_id = $1 AND state = 'pending' AND (upload_expires_at > $2 OR upload_claimed_at IS NOT NULL))`;

/** The row of storage_sweep_state that keeps the orphan scan's place in the object store's listing. */
const ORPHAN_SCAN = 'orphan-scan';

/**
 * Data access for storage items and upload nonces (and the sweeper's place in the store), on the `Db` it is given.
 * Every read of tenant data takes the organization id. State changes are single conditional statements, so two
 * requests racing on one item cannot both win.
 */
@Injectable()
export class StorageRepository {
  async createPending(db: Db, item: NewStorageItem, uploadExpiresAt: Date): Promise<StorageItem> {
    const created = await db.row<StorageItem>(
      `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, file_name, object_key, state, upload_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9) RETURNING ${COLUMNS}`,
      [
        item.id,
        item.organizationId,
        item.kind,
        item.size,
        item.contentType,
        jsonOrNull(item.metadata),
        item.fileName ?? null,
        item.objectKey,
        uploadExpiresAt,
      ],
    );
    return created!;
  }

  async createComplete(db: Db, item: NewStorageItem, checksum: string): Promise<StorageItem> {
    const created = await db.row<StorageItem>(
      `INSERT INTO storage_items (id, organization_id, kind, size, content_type, metadata, file_name, object_key, state, checksum, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'complete', $9, clock_timestamp()) RETURNING ${COLUMNS}`,
      [
        item.id,
        item.organizationId,
        item.kind,
        item.size,
        item.contentType,
        jsonOrNull(item.metadata),
        item.fileName ?? null,
        item.objectKey,
        checksum,
      ],
    );
    return created!;
  }

  /** Marks an upload to a pending item as under way; null when the item is gone, complete or already claimed. */
  claimPending(db: Db, organizationId: string, itemId: string): Promise<StorageItem | null> {
    return db.row<StorageItem>(
      `UPDATE storage_items SET upload_claimed_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND state = 'pending' AND upload_claimed_at IS NULL
       RETURNING ${COLUMNS}`,
      [itemId, organizationId],
    );
  }

  /** A failed upload gives the URL back, so the client can retry it until it expires. */
  async releaseClaim(db: Db, organizationId: string, itemId: string): Promise<void> {
    await db.rows(`UPDATE storage_items SET upload_claimed_at = NULL WHERE id = $1 AND organization_id = $2 AND state = 'pending'`, [
      itemId,
      organizationId,
    ]);
  }

  /** null when the item was deleted or purged while its bytes were streaming. */
  completePending(db: Db, organizationId: string, itemId: string, checksum: string): Promise<StorageItem | null> {
    return db.row<StorageItem>(
      `UPDATE storage_items SET state = 'complete', checksum = $3, completed_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND state = 'pending'
       RETURNING ${COLUMNS}`,
      [itemId, organizationId, checksum],
    );
  }

  /**
   * Takes the organization's row lock for the rest of the transaction and returns its allocation; null when
   * there is no such organization. FOR NO KEY UPDATE: reservations queue behind each other, behind flag
   * writes (which lock the row FOR UPDATE) and behind an allocation change, while foreign-key checks of
   * inserts elsewhere (FOR KEY SHARE) pass.
   */
  async lockAllocation(tx: Transaction, organizationId: string): Promise<number | null> {
    const row = await tx.row<{ storageAllocation: number }>(
      `SELECT storage_allocation::float8 AS "storageAllocation" FROM organizations WHERE id = $1 FOR NO KEY UPDATE`,
      [organizationId],
    );
    return row?.storageAllocation ?? null;
  }

  /** The allocation and what counts against it, read without a lock (for an estimate). */
  allocationUsage(db: Db, organizationId: string, now: Date): Promise<AllocationUsage | null> {
    return db.row<AllocationUsage>(
      `SELECT storage_allocation::float8 AS allocation, (${RESERVED_BYTES})::float8 AS reserved FROM organizations WHERE id = $1`,
      [organizationId, now],
    );
  }

  /**
   * Bytes that count against the allocation: complete files, and pending items whose URL has not expired at
   * `now` or that an upload is streaming into (it may outlive the URL's expiry, and its bytes will land).
   */
  async reservedBytes(db: Db, organizationId: string, now: Date): Promise<number> {
    const row = await db.row<{ reserved: number }>(`SELECT (${RESERVED_BYTES})::float8 AS reserved`, [organizationId, now]);
    return row!.reserved;
  }

  /** Claims a non-allocated URL's nonce; false when another upload already used it. */
  async claimNonce(db: Db, organizationId: string, nonce: string, expiresAt: Date): Promise<boolean> {
    const rows = await db.rows(
      `INSERT INTO storage_upload_nonces (nonce, organization_id, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (nonce) DO NOTHING RETURNING nonce`,
      [nonce, organizationId, expiresAt],
    );
    return rows.length === 1;
  }

  async releaseNonce(db: Db, organizationId: string, nonce: string): Promise<void> {
    await db.rows(`DELETE FROM storage_upload_nonces WHERE nonce = $1 AND organization_id = $2`, [nonce, organizationId]);
  }

  findItem(db: Db, organizationId: string, itemId: string): Promise<StorageItem | null> {
    return db.row<StorageItem>(`SELECT ${COLUMNS} FROM storage_items WHERE id = $1 AND organization_id = $2`, [itemId, organizationId]);
  }

  findCompleteItem(db: Db, organizationId: string, itemId: string): Promise<StorageItem | null> {
    return db.row<StorageItem>(`SELECT ${COLUMNS} FROM storage_items WHERE id = $1 AND organization_id = $2 AND state = 'complete'`, [
      itemId,
      organizationId,
    ]);
  }

  /** Newest first, ties broken by id so pages never overlap. */
  async listItems(
    db: Db,
    organizationId: string,
    kind: StorageKind | undefined,
    offset: number,
    limit: number,
  ): Promise<{ items: StorageItem[]; total: number }> {
    const [where, parameters] = filterClause(organizationId, { kind });
    const [items, total] = await Promise.all([
      db.rows<StorageItem>(
        `SELECT ${COLUMNS} FROM storage_items WHERE ${where} ORDER BY created_at DESC, id DESC
         LIMIT $${parameters.length + 1} OFFSET $${parameters.length + 2}`,
        [...parameters, limit, offset],
      ),
      this.countItems(db, organizationId, { kind }),
    ]);
    return { items, total };
  }

  /** Count and bytes of complete items per kind (kinds without items are absent). */
  usageByKind(db: Db, organizationId: string): Promise<KindUsage[]> {
    return db.rows<KindUsage>(
      `SELECT kind, count(*)::int AS count, coalesce(sum(size), 0)::float8 AS size
       FROM storage_items WHERE organization_id = $1 AND state = 'complete' GROUP BY kind`,
      [organizationId],
    );
  }

  /** Deletes the row and returns its object key, for the caller to delete the bytes after. */
  async deleteItem(db: Db, organizationId: string, itemId: string): Promise<string | null> {
    const deleted = await db.row<{ objectKey: string }>(
      `DELETE FROM storage_items WHERE id = $1 AND organization_id = $2 RETURNING object_key AS "objectKey"`,
      [itemId, organizationId],
    );
    return deleted?.objectKey ?? null;
  }

  async countItems(db: Db, organizationId: string, filter: ItemFilter): Promise<number> {
    const [where, parameters] = filterClause(organizationId, filter);
    const counted = await db.row<{ count: number }>(`SELECT count(*)::int AS count FROM storage_items WHERE ${where}`, parameters);
    return counted!.count;
  }

  /** Deletes every matching row and returns their ids and object keys. */
  deleteItems(db: Db, organizationId: string, filter: ItemFilter): Promise<{ id: string; objectKey: string }[]> {
    const [where, parameters] = filterClause(organizationId, filter);
    return db.rows<{ id: string; objectKey: string }>(`DELETE FROM storage_items WHERE ${where} RETURNING id, object_key AS "objectKey"`, parameters);
  }

  /**
   * Sweeper: deletes pending items whose URL expired before `expiredBefore` and that no upload is streaming
   * into (or whose upload claim is older than `staleClaimBefore`, left by a crash). Returns their object keys.
   */
  async deleteExpiredPending(db: Db, expiredBefore: Date, staleClaimBefore: Date, limit: number): Promise<string[]> {
    const rows = await db.rows<{ objectKey: string }>(
      `DELETE FROM storage_items WHERE id IN (
         SELECT id FROM storage_items
         WHERE state = 'pending' AND upload_expires_at < $1
           AND (upload_claimed_at IS NULL OR upload_claimed_at < $2)
         LIMIT $3
       ) AND state = 'pending' RETURNING object_key AS "objectKey"`,
      [expiredBefore, staleClaimBefore, limit],
    );
    return rows.map((row) => row.objectKey);
  }

  /** Sweeper: nonces matter only while their URL could still be used. */
  async deleteExpiredNonces(db: Db, expiredBefore: Date): Promise<number> {
    const rows = await db.rows(`DELETE FROM storage_upload_nonces WHERE expires_at < $1 RETURNING nonce`, [expiredBefore]);
    return rows.length;
  }

  /** Sweeper: which of these item ids still have a row (any organization: the sweep is not a tenant read). */
  async existingItemIds(db: Db, itemIds: string[]): Promise<Set<string>> {
    if (itemIds.length === 0) return new Set();
    const rows = await db.rows<{ id: string }>(`SELECT id FROM storage_items WHERE id = ANY($1::uuid[])`, [itemIds]);
    return new Set(rows.map((row) => row.id));
  }

  /** Sweeper: the last object key the orphan scan examined; null when the next scan starts from the beginning. */
  async orphanScanMarker(db: Db): Promise<string | null> {
    const row = await db.row<{ marker: string }>(`SELECT marker FROM storage_sweep_state WHERE name = $1`, [ORPHAN_SCAN]);
    return row?.marker ?? null;
  }

  /** Sweeper: where the next orphan scan resumes; null to start over from the beginning. */
  async saveOrphanScanMarker(db: Db, marker: string | null): Promise<void> {
    if (marker === null) {
      await db.rows(`DELETE FROM storage_sweep_state WHERE name = $1`, [ORPHAN_SCAN]);
      return;
    }
    await db.rows(
      `INSERT INTO storage_sweep_state (name, marker) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET marker = EXCLUDED.marker, updated_at = clock_timestamp()`,
      [ORPHAN_SCAN, marker],
    );
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
