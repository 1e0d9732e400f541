import { StorageItemPageDto } from './items/dto/list-items.dto';
import { dryRunPurgeMessage, MessageDto, PurgeResultDto } from './items/dto/purge.dto';
import { StorageItemDto, UploadedItemDto } from './items/dto/storage-item.dto';
import { StorageStatsDto } from './items/dto/storage-stats.dto';
import { StorageKind } from './items/storage-kind';
import { SignedUrlDto } from './signed-urls/dto/signed-url.dto';

/**
 * What the storage documentation shows: the real shapes with made-up ids and a made-up deployment at
 * https://flags.example.com (the OpenAPI test holds each example to its schema).
 */

const ORGANIZATION_ID = '3f1c9a2e-7b4d-4e8a-9c61-2d5f0b8e4a17';
const MEDIA_ID = 'd2f4a6c8-1e3b-4d5f-8a7c-9e1b3d5f7a9c';
const PUBLIC_URL = 'https://flags.example.com';
const MEDIA_URL = `${PUBLIC_URL}/c/${ORGANIZATION_ID}/${MEDIA_ID}`;

export const SIGNED_URL_EXAMPLES = {
  preallocated: {
    summary: 'Pre-allocated (contentType and size given): PUT the bytes to url',
    value: {
      url: `${PUBLIC_URL}/upload/${ORGANIZATION_ID}/${MEDIA_ID}?size=20480&contentType=image%2Fpng&expires=1795862100&signature=EXAMPLEsignature`,
      expiresAt: '2026-11-27T10:15:00.000Z',
      mediaId: MEDIA_ID,
      mediaUrl: MEDIA_URL,
    } satisfies SignedUrlDto,
  },
  nonAllocated: {
    summary: 'Non-allocated (no parameters): POST multipart/form-data to url',
    value: {
      url: `${PUBLIC_URL}/upload/${ORGANIZATION_ID}?nonce=EXAMPLEnonce&expires=1795862100&signature=EXAMPLEsignature`,
      expiresAt: '2026-11-27T10:15:00.000Z',
    } satisfies SignedUrlDto,
  },
};

const ITEM: StorageItemDto = {
  id: MEDIA_ID,
  kind: StorageKind.IMAGE,
  size: 20480,
  state: 'complete',
  metadata: { level: 3, author: 'mira', public: true },
  fileName: 'level-3 banner.png',
  createdAt: '2026-11-27T10:00:12.000Z',
};

export const UPLOADED_ITEM_EXAMPLE: UploadedItemDto = { ...ITEM, mediaUrl: MEDIA_URL };

export const STORAGE_ITEM_PAGE_EXAMPLE: StorageItemPageDto = {
  items: [
    {
      id: 'f1e2d3c4-b5a6-4978-8c6d-5e4f3a2b1c0d',
      kind: StorageKind.DOCUMENT,
      size: 5120,
      state: 'pending',
      metadata: null,
      createdAt: '2026-11-27T10:05:00.000Z',
    },
    ITEM,
  ],
  total: 2,
  page: 1,
  limit: 10,
  totalPages: 1,
};

export const STORAGE_STATS_EXAMPLE: StorageStatsDto = {
  totalStorage: 1073741824,
  usedStorage: 5263360,
  overageStorage: 0,
  breakdown: [
    { kind: StorageKind.IMAGE, count: 12, size: 4194304 },
    { kind: StorageKind.VIDEO, count: 0, size: 0 },
    { kind: StorageKind.AUDIO, count: 2, size: 1048576 },
    { kind: StorageKind.DOCUMENT, count: 3, size: 20480 },
  ],
};

export const PURGE_RESULT_EXAMPLES = {
  purged: { summary: 'Purged', value: { message: 'Purged 3 item(s)', purgedCount: 3, dryRun: false } satisfies PurgeResultDto },
  dryRun: {
    summary: 'dryRun: true',
    value: { message: dryRunPurgeMessage(3), purgedCount: 3, dryRun: true } satisfies PurgeResultDto,
  },
};

export const DELETED_EXAMPLE: MessageDto = { message: `Storage item ${MEDIA_ID} deleted` };
