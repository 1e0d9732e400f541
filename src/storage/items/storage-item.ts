import { StorageKind } from './storage-kind';

export type StorageItemState = 'pending' | 'complete';
export type StorageMetadata = Record<string, string | number | boolean>;

/** A row of `storage_items`, as the repository returns it. */
export interface StorageItem {
  id: string;
  organizationId: string;
  kind: StorageKind;
  /** Bytes: declared for a pending item, stored for a complete one. */
  size: number;
  contentType: string;
  state: StorageItemState;
  metadata: StorageMetadata | null;
  /** The name the uploader gave the file (decisions.md, "File names"), or null. */
  fileName: string | null;
  objectKey: string;
  /** sha256 of the bytes, hex; the CDN's strong ETag. Set when the upload completes. */
  checksum: string | null;
  /** When the signed URL of a pending item stops working; the sweeper removes the item after it. */
  uploadExpiresAt: Date | null;
  /** Set while an upload to the item's URL is streaming, so a second upload to the same URL gets 409. */
  uploadClaimedAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
}
