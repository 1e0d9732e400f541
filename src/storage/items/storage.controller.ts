import { Body, Controller, Delete, Get, HttpStatus, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../auth/auth.decorators';
import type { Principal } from '../../auth/principal';
import { UuidParam } from '../../common/decorators/uuid-param.decorator';
import { Permission } from '../../auth/permission';
import { SignedUrlDto, SignedUrlQueryDto } from '../signed-urls/dto/signed-url.dto';
import { ApiStorageErrors, RequireStoragePermission } from '../storage-openapi';
import { STORAGE_API_ROUTE } from '../storage-routes';
import { StorageErrors } from '../storage.errors';
import { ListItemsQueryDto, StorageItemPageDto } from './dto/list-items.dto';
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
      'With contentType and size: a pending item is created and the URL takes one PUT of exactly that many bytes.',
  })
  @ApiOkResponse({ type: SignedUrlDto })
  @ApiStorageErrors(
    [HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: bad contentType or size, only one of them, or a metadata rule broken'],
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
  @ApiOperation({ summary: "List the organization's files, newest first (pending ones included)" })
  @ApiOkResponse({ type: StorageItemPageDto })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: page, limit or kind out of range'])
  @RequireStoragePermission(Permission.STORAGE_READ)
  listItems(@CurrentPrincipal() principal: Principal, @Query() query: ListItemsQueryDto): Promise<StorageItemPageDto> {
    return this.storage.listItems(principal.organizationId, query);
  }

  @Get()
  @ApiOperation({ summary: 'Storage statistics: allocation, use, overage and a per-kind breakdown of complete files' })
  @ApiOkResponse({ type: StorageStatsDto })
  @RequireStoragePermission(Permission.STORAGE_READ)
  statistics(@CurrentPrincipal() principal: Principal): Promise<StorageStatsDto> {
    return this.storage.statistics(principal.organizationId);
  }

  // Declared before DELETE :fileId so that the literal path wins over the parameter.
  @Delete('purge')
  @ApiOperation({
    summary: 'Delete every file matching the filters (kind, before, after combine); irreversible unless dryRun',
  })
  @ApiBody({ type: PurgeDto, required: false })
  @ApiOkResponse({ type: PurgeResultDto })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: bad kind, date or dryRun'])
  @RequireStoragePermission(Permission.STORAGE_WRITE)
  purge(@CurrentPrincipal() principal: Principal, @Body() dto: PurgeDto): Promise<PurgeResultDto> {
    return this.storage.purge(principal.organizationId, dto);
  }

  @Delete(':fileId')
  @ApiOperation({ summary: 'Delete one file; its CDN URL answers 404 at once. Irreversible.' })
  @ApiOkResponse({ type: MessageDto })
  @ApiStorageErrors(
    [HttpStatus.BAD_REQUEST, 'INVALID_UUID: fileId is not a UUID'],
    [HttpStatus.NOT_FOUND, 'NOT_FOUND: no such file in this organization'],
  )
  @RequireStoragePermission(Permission.STORAGE_WRITE)
  deleteItem(@CurrentPrincipal() principal: Principal, @UuidParam('fileId', StorageErrors.invalidUuid) fileId: string): Promise<MessageDto> {
    return this.storage.deleteItem(principal.organizationId, fileId);
  }
}
