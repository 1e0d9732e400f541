import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { StorageItem, StorageItemState, StorageMetadata } from '../storage-item';
import { StorageKind } from '../storage-kind';

const METADATA_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  additionalProperties: { oneOf: [{ type: 'string', maxLength: 512 }, { type: 'number' }, { type: 'boolean' }] },
  example: { level: 3, author: 'mira', public: true },
};

/** A stored file as the API shows it (the row without its storage internals). */
export class StorageItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: StorageKind }) kind: StorageKind;
  @ApiProperty({ description: 'Bytes' }) size: number;
  @ApiProperty({ enum: ['pending', 'complete'] }) state: StorageItemState;
  @ApiProperty({ ...METADATA_SCHEMA, description: 'Metadata attached to the file, or null' })
  metadata: StorageMetadata | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(item: StorageItem): StorageItemDto {
    return {
      id: item.id,
      kind: item.kind,
      size: item.size,
      state: item.state,
      metadata: item.metadata,
      createdAt: item.createdAt.toISOString(),
    };
  }
}

/** The answer to an upload: the stored item and where the CDN serves it. */
export class UploadedItemDto extends StorageItemDto {
  @ApiProperty({ description: 'Public CDN address: {cdn_url}/c/<organizationId>/<mediaId>', format: 'uri' })
  mediaUrl: string;

  static fromUpload(item: StorageItem, mediaUrl: string): UploadedItemDto {
    return { ...StorageItemDto.from(item), mediaUrl };
  }
}
