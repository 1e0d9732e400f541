import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { bigintTransformer } from '../common/bigint.transformer';
import { StorageKind } from './storage-kind';

export type StorageItemState = 'pending' | 'complete';
export type StorageMetadata = Record<string, string | number | boolean>;

@Entity('storage_items')
export class StorageItemEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 16 })
  kind: StorageKind;

  @Column({ type: 'bigint', transformer: bigintTransformer })
  size: number;

  @Column({ name: 'content_type', type: 'varchar', length: 255 })
  contentType: string;

  @Column({ type: 'varchar', length: 16 })
  state: StorageItemState;

  @Column({ type: 'jsonb', nullable: true })
  metadata: StorageMetadata | null;

  @Column({ name: 'object_key', type: 'varchar', length: 300 })
  objectKey: string;

  /** sha256 of the bytes, hex; the CDN's strong ETag. Set when the upload completes. */
  @Column({ type: 'char', length: 64, nullable: true })
  checksum: string | null;

  /** When the signed URL of a pending item stops working; the sweeper removes the item after it. */
  @Column({ name: 'upload_expires_at', type: 'timestamptz', nullable: true })
  uploadExpiresAt: Date | null;

  /** Set while an upload to the item's URL is streaming, so a second upload to the same URL gets 409. */
  @Column({ name: 'upload_claimed_at', type: 'timestamptz', nullable: true })
  uploadClaimedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}
