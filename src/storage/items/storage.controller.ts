import { Body, Controller, Delete, Get, HttpStatus, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../auth/auth.decorators';
import type { Principal } from '../../auth/principal';
import { ApiJsonBody } from '../../common/decorators/api-json-body.decorator';
import { UuidParam } from '../../common/decorators/uuid-param.decorator';
import { Permission } from '../../auth/permission';
import { SignedUrlDto, SignedUrlQueryDto } from '../signed-urls/dto/signed-url.dto';
import { ApiStorageErrors, RequireStoragePermission } from '../storage-openapi';
import { STORAGE_API_ROUTE } from '../storage-routes';
import { StorageErrors } from '../storage.errors';
import { DELETED_EXAMPLE, PURGE_RESULT_EXAMPLES, SIGNED_URL_EXAMPLES, STORAGE_ITEM_PAGE_EXAMPLE, STORAGE_STATS_EXAMPLE } from '../storage.examples';
import { ListItemsQueryDto, StorageItemPageDto } from './dto/list-items.dto';
import { StorageKind } from './storage-kind';
import { MessageDto, PurgeDto, PurgeResultDto } from './dto/purge.dto';
import { StorageStatsDto } from './dto/storage-stats.dto';
import { StorageService } from './storage.service';

@ApiTags('storage')
@Controller(STORAGE_API_ROUTE)
export class StorageController {
  constructor(private readonly storage: StorageService) {}

  @Get('signed-url')
  @ApiOperation({
    summary: 'Get a single-use upload URL (15 minutes)',
    description:
      'Without parameters: a non-allocated URL (POST multipart/form-data, field `file`, optional `metadata`). ' +
      'With contentType and size: a pending item is created and the URL takes one PUT of exactly that many bytes; fileName (optional) ' +
      "names it (answered as the item's fileName, and given by the CDN in Content-Disposition).",
  })
  @ApiOkResponse({ type: SignedUrlDto, examples: SIGNED_URL_EXAMPLES })
  @ApiStorageErrors(
    [
      HttpStatus.BAD_REQUEST,
      'VALIDATION_ERROR: bad contentType or size, only one of them, a metadata rule broken, or fileName not 1-255 characters without /, \\ or control characters (or given without contentType and size)',
    ],
    [
      HttpStatus.PAYLOAD_TOO_LARGE,
      'PAYLOAD_TOO_LARGE: size is above MAX_UPLOAD_BYTES. ALLOCATION_EXCEEDED (only with STORAGE_ENFORCE_ALLOCATION): ' +
        "size would take the organization's complete files plus its pending, unexpired reservations past its storageAllocation",
    ],
  )
  @RequireStoragePermission(Permission.STORAGE_WRITE)
  createSignedUrl(@CurrentPrincipal() principal: Principal, @Query() query: SignedUrlQueryDto): Promise<SignedUrlDto> {
    return this.storage.createSignedUrl(principal.organizationId, query);
  }

  @Get('items')
  @ApiOperation({
    summary: "List the organization's files, newest first (pending ones included)",
    description:
      'Pages of 1-100 items (10 by default), optionally of one `kind`. A `pending` item is a pre-allocated upload whose bytes have ' +
      'not arrived; it is swept once its URL expires unused. Only `complete` items are served by the CDN and counted in GET /v1/storage.',
  })
  @ApiOkResponse({ type: StorageItemPageDto, example: STORAGE_ITEM_PAGE_EXAMPLE })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: page, limit or kind out of range'])
  @RequireStoragePermission(Permission.STORAGE_READ)
  listItems(@CurrentPrincipal() principal: Principal, @Query() query: ListItemsQueryDto): Promise<StorageItemPageDto> {
    return this.storage.listItems(principal.organizationId, query);
  }

  @Get()
  @ApiOperation({
    summary: 'Storage statistics: allocation, use, overage and a per-kind breakdown of complete files',
    description:
      "`totalStorage` is the organization's storageAllocation (set by the admin API); `overageStorage` is what complete files use " +
      'beyond it. Uploads past the allocation are reported, not refused, unless STORAGE_ENFORCE_ALLOCATION is on. The breakdown ' +
      'always lists the four kinds.',
  })
  @ApiOkResponse({ type: StorageStatsDto, example: STORAGE_STATS_EXAMPLE })
  @RequireStoragePermission(Permission.STORAGE_READ)
  statistics(@CurrentPrincipal() principal: Principal): Promise<StorageStatsDto> {
    return this.storage.statistics(principal.organizationId);
  }

  // Declared before DELETE :fileId so that the literal path wins over the parameter.
  @Delete('purge')
  @ApiOperation({
    summary: 'Delete every file matching the filters (kind, before, after combine); irreversible unless dryRun',
    description:
      'The filters are JSON body fields (not query parameters) and combine; an empty body (or none) matches every file, pending ' +
      'ones included. Send `dryRun: true` first: it answers `dryRun: true` with the count of files that would be purged (`purgedCount`) ' +
      'and deletes nothing; a purge answers `dryRun: false` with the count it deleted. Purged files answer 404 on the CDN at once.',
  })
  @ApiJsonBody(
    PurgeDto,
    {
      dryRun: {
        summary: 'Count the images older than March, deleting nothing',
        value: { kind: StorageKind.IMAGE, before: '2026-03-01T00:00:00Z', dryRun: true },
      },
      window: {
        summary: 'Delete the documents uploaded in January',
        value: { kind: StorageKind.DOCUMENT, after: '2026-01-01T00:00:00Z', before: '2026-02-01T00:00:00Z' },
      },
    },
    { required: false },
  )
  @ApiOkResponse({ type: PurgeResultDto, examples: PURGE_RESULT_EXAMPLES })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: bad kind, date or dryRun'])
  @RequireStoragePermission(Permission.STORAGE_WRITE)
  purge(@CurrentPrincipal() principal: Principal, @Body() dto: PurgeDto): Promise<PurgeResultDto> {
    return this.storage.purge(principal.organizationId, dto);
  }

  @Delete(':fileId')
  @ApiOperation({
    summary: 'Delete one file; its CDN URL answers 404 at once. Irreversible.',
    description:
      'Complete or pending: the item and its bytes are removed, and a pending upload URL for it stops working. Errors are ' +
      '`{error: {code, message}}`: INVALID_UUID (400) for a malformed id, NOT_FOUND (404) for a file not in this organization.',
  })
  @ApiOkResponse({ type: MessageDto, example: DELETED_EXAMPLE })
  @ApiStorageErrors(
    [HttpStatus.BAD_REQUEST, 'INVALID_UUID: fileId is not a UUID'],
    [HttpStatus.NOT_FOUND, 'NOT_FOUND: no such file in this organization'],
  )
  @RequireStoragePermission(Permission.STORAGE_WRITE)
  deleteItem(@CurrentPrincipal() principal: Principal, @UuidParam('fileId', StorageErrors.invalidUuid) fileId: string): Promise<MessageDto> {
    return this.storage.deleteItem(principal.organizationId, fileId);
  }
}
