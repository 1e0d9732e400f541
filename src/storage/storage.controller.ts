import { Body, Controller, Delete, Get, HttpStatus, Query, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { Permission } from '../organizations/permission';
import { ListItemsQueryDto, StorageItemPageDto } from './dto/list-items.dto';
import { MessageDto, PurgeDto, PurgeResultDto } from './dto/purge.dto';
import { SignedUrlDto, SignedUrlQueryDto } from './dto/signed-url.dto';
import { StorageStatsDto } from './dto/storage-stats.dto';
import { StorageExceptionFilter } from './storage-exception.filter';
import { ApiStorageErrors } from './storage-openapi';
import { StorageErrors } from './storage.errors';
import { StorageService } from './storage.service';

// RequirePermission sits last on each route so that these, applied after it, give its 401/403 the error schema.
const AUTH_ERRORS: Array<[HttpStatus, string?]> = [
  [HttpStatus.UNAUTHORIZED],
  [HttpStatus.FORBIDDEN, 'FORBIDDEN: the API key lacks the permission'],
];

@ApiTags('storage')
@UseFilters(StorageExceptionFilter)
@Controller('storage')
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
    ...AUTH_ERRORS,
    [HttpStatus.PAYLOAD_TOO_LARGE, 'PAYLOAD_TOO_LARGE: size is above MAX_UPLOAD_BYTES'],
  )
  @RequirePermission(Permission.STORAGE_WRITE)
  createSignedUrl(@CurrentPrincipal() principal: Principal, @Query() query: SignedUrlQueryDto): Promise<SignedUrlDto> {
    return this.storage.createSignedUrl(principal.organizationId, query);
  }

  @Get('items')
  @ApiOperation({ summary: "List the organization's files, newest first (pending ones included)" })
  @ApiOkResponse({ type: StorageItemPageDto })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: page, limit or kind out of range'], ...AUTH_ERRORS)
  @RequirePermission(Permission.STORAGE_READ)
  listItems(@CurrentPrincipal() principal: Principal, @Query() query: ListItemsQueryDto): Promise<StorageItemPageDto> {
    return this.storage.listItems(principal.organizationId, query);
  }

  @Get()
  @ApiOperation({ summary: 'Storage statistics: allocation, use, overage and a per-kind breakdown of complete files' })
  @ApiOkResponse({ type: StorageStatsDto })
  @ApiStorageErrors(...AUTH_ERRORS)
  @RequirePermission(Permission.STORAGE_READ)
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
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: bad kind, date or dryRun'], ...AUTH_ERRORS)
  @RequirePermission(Permission.STORAGE_WRITE)
  purge(@CurrentPrincipal() principal: Principal, @Body() dto: PurgeDto): Promise<PurgeResultDto> {
    return this.storage.purge(principal.organizationId, dto);
  }

  @Delete(':fileId')
  @ApiOperation({ summary: 'Delete one file; its CDN URL answers 404 at once. Irreversible.' })
  @ApiOkResponse({ type: MessageDto })
  @ApiStorageErrors(
    [HttpStatus.BAD_REQUEST, 'INVALID_UUID: fileId is not a UUID'],
    ...AUTH_ERRORS,
    [HttpStatus.NOT_FOUND, 'NOT_FOUND: no such file in this organization'],
  )
  @RequirePermission(Permission.STORAGE_WRITE)
  deleteItem(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('fileId', StorageErrors.invalidUuid) fileId: string,
  ): Promise<MessageDto> {
    return this.storage.deleteItem(principal.organizationId, fileId);
  }
}
