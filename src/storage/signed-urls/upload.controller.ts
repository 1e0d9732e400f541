import { Controller, HttpCode, HttpStatus, Param, Post, Put, Query, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../http/access';
import { UploadedItemDto } from '../items/dto/storage-item.dto';
import { ApiStorageErrors } from '../storage-openapi';
import { UPLOADED_ITEM_EXAMPLE } from '../storage.examples';
import { UPLOAD_ROUTE } from '../storage-routes';
import { UploadQuery } from './signed-urls';
import { UploadService } from './upload.service';

const URL_ERRORS = [
  [HttpStatus.FORBIDDEN, 'FORBIDDEN: the URL is expired, tampered with or incomplete'],
  [HttpStatus.NOT_FOUND, 'NOT_FOUND: the pre-allocated item was deleted or purged'],
  [HttpStatus.CONFLICT, 'CONFLICT: the URL has already been used (or an upload to it is under way)'],
  [HttpStatus.PAYLOAD_TOO_LARGE, 'PAYLOAD_TOO_LARGE: the body passed the signed size or MAX_UPLOAD_BYTES'],
] as Array<[HttpStatus, string]>;

/**
 * The upload host ({upload_url}, outside /v1). No bearer header: the signed URL is the authorization.
 * The body is never parsed by Express; the service streams it.
 */
@ApiTags('upload')
@Public()
@Controller(UPLOAD_ROUTE)
export class UploadController {
  constructor(private readonly uploads: UploadService) {}

  @Put(':organizationId/:mediaId')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Pre-allocated upload: the raw file as the body, with the Content-Type it was signed for',
    description:
      'Send the `url` of GET /v1/storage/signed-url (with contentType and size) as it is, without an Authorization header: the ' +
      'signature is the authorisation. Exactly the declared number of bytes, with the declared Content-Type; the URL works once, ' +
      'for 15 minutes. The body is streamed to the store; the item becomes `complete` and its mediaUrl serves it. Browsers may ' +
      'call it cross-origin.',
  })
  @ApiParam({ name: 'organizationId', format: 'uuid' })
  @ApiParam({ name: 'mediaId', format: 'uuid' })
  @ApiQuery({ name: 'size', description: 'Part of the signed URL' })
  @ApiQuery({ name: 'contentType', description: 'Part of the signed URL' })
  @ApiQuery({ name: 'expires', description: 'Part of the signed URL' })
  @ApiQuery({ name: 'signature', description: 'Part of the signed URL' })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @ApiOkResponse({ type: UploadedItemDto, description: 'The item, now complete', example: UPLOADED_ITEM_EXAMPLE })
  @ApiStorageErrors([HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: wrong Content-Type or wrong number of bytes'], ...URL_ERRORS)
  uploadPreallocated(
    @Param('organizationId') organizationId: string,
    @Param('mediaId') mediaId: string,
    @Query() query: UploadQuery,
    @Req() request: Request,
  ): Promise<UploadedItemDto> {
    return this.uploads.uploadPreallocated(organizationId, mediaId, query, request);
  }

  @Post(':organizationId')
  @ApiOperation({
    summary: 'Non-allocated upload: multipart/form-data with `file` and optional `metadata` (JSON)',
    description:
      'Send the `url` of GET /v1/storage/signed-url (without parameters) as it is, without an Authorization header. One `file` ' +
      'part, whose Content-Type decides the item\'s kind and whose filename (filename="..." in UTF-8, or filename*) becomes the ' +
      "item's fileName (its last path segment; 1-255 characters without control characters, else 400), and an optional `metadata` " +
      'part holding a JSON object (the signed-URL metadata rules). The URL works once, for 15 minutes; the file is streamed to the ' +
      'store, never held in memory.',
  })
  @ApiParam({ name: 'organizationId', format: 'uuid' })
  @ApiQuery({ name: 'nonce', description: 'Part of the signed URL' })
  @ApiQuery({ name: 'expires', description: 'Part of the signed URL' })
  @ApiQuery({ name: 'signature', description: 'Part of the signed URL' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        file: {
          type: 'string',
          format: 'binary',
          description: "The file; its part's Content-Type is the file's type, its part's filename the item's fileName",
        },
        metadata: { type: 'string', description: 'JSON-encoded object (rules of the signed-URL metadata)' },
      },
    },
  })
  @ApiCreatedResponse({ type: UploadedItemDto, description: 'The stored item', example: UPLOADED_ITEM_EXAMPLE })
  @ApiStorageErrors(
    [
      HttpStatus.BAD_REQUEST,
      "VALIDATION_ERROR: not multipart, no file part, unknown fields, a metadata rule broken, or the file part's filename not a fileName",
    ],
    ...URL_ERRORS.filter(([status]) => status !== HttpStatus.NOT_FOUND && status !== HttpStatus.PAYLOAD_TOO_LARGE),
    [
      HttpStatus.PAYLOAD_TOO_LARGE,
      'PAYLOAD_TOO_LARGE: the file passed MAX_UPLOAD_BYTES. ALLOCATION_EXCEEDED (only with STORAGE_ENFORCE_ALLOCATION): ' +
        "the file would take the organization's complete files plus its pending, unexpired reservations past its storageAllocation",
    ],
  )
  uploadNonAllocated(
    @Param('organizationId') organizationId: string,
    @Query() query: UploadQuery,
    @Req() request: Request,
  ): Promise<UploadedItemDto> {
    return this.uploads.uploadNonAllocated(organizationId, query, request);
  }
}
