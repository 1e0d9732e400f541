import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { FILE_NAME_MAX_LENGTH } from '../file-name';
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
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: FILE_NAME_MAX_LENGTH,
    description:
      "The file's name, as the upload gave it (the signed-URL request's fileName, or the multipart file part's filename); " +
      'present only when it was given. The CDN offers the file under it (Content-Disposition). Never a key of metadata.',
    example: 'level-3 banner.png',
  })
  fileName?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(item: StorageItem): StorageItemDto {
    return {
      id: item.id,
      kind: item.kind,
      size: item.size,
      state: item.state,
      metadata: item.metadata,
      ...(item.fileName === null ? {} : { fileName: item.fileName }),
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
