import { applyDecorators, Controller, Get, Head, HttpStatus, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { Public } from '../../http/access';
import { ApiStorageErrors } from '../storage-openapi';
import { CDN_ROUTE } from '../storage-routes';
import { CdnRequest, CdnResponse, CdnService } from './cdn.service';

/** The CDN route ({cdn_url}/c/..., outside /v1): public, immutable, conditional and ranged. */
@ApiTags('cdn')
@Public()
@Controller(CDN_ROUTE)
export class CdnController {
  constructor(private readonly cdn: CdnService) {}

  @Get(':organizationId/:mediaId')
  @ApiOperation({
    summary: 'Download a complete file (supports If-None-Match and a single Range)',
    description:
      'The public address of an upload (its mediaUrl): no authorisation, so anyone with the address can read the file. Served with ' +
      'its stored Content-Type, a strong ETag and `Cache-Control: immutable`; anything that is not an image, audio or video comes ' +
      'as an attachment. A file uploaded with a name (fileName) is offered under it: `Content-Disposition: inline` or `attachment`, ' +
      'then `filename="<the name in safe ASCII>"; filename*=UTF-8\'\'<the name percent-encoded>` (RFC 6266). A pending, deleted or ' +
      'purged file is 404 at once. Browsers may call it cross-origin.',
  })
  @CdnResponses()
  async download(
    @Param('organizationId') organizationId: string,
    @Param('mediaId') mediaId: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    send(response, await this.cdn.read(organizationId, mediaId, cdnRequest(request)));
  }

  @Head(':organizationId/:mediaId')
  @ApiOperation({
    summary: 'The headers of a download, without the body',
    description:
      'Answers as GET does (status, Content-Type, Content-Length, ETag, Content-Range for a range), with no body: to check a file without fetching it.',
  })
  @CdnResponses()
  async head(
    @Param('organizationId') organizationId: string,
    @Param('mediaId') mediaId: string,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    send(response, await this.cdn.read(organizationId, mediaId, cdnRequest(request)));
  }
}

/** GET and HEAD answer alike (HEAD without the body): same statuses, same headers. */
function CdnResponses() {
  const file = { type: 'string', format: 'binary' } as const;
  const headers = {
    'Content-Disposition': {
      description:
        "attachment for anything but images, audio and video; with the file's name when it has one: " +
        '`attachment; filename="Ubersicht.pdf"; filename*=UTF-8\'\'%C3%9Cbersicht.pdf` (inline media: `inline; filename=...`). Absent for an unnamed image, audio or video.',
      schema: { type: 'string' },
    },
  };
  return applyDecorators(
    ApiParam({ name: 'organizationId', format: 'uuid' }),
    ApiParam({ name: 'mediaId', format: 'uuid' }),
    ApiProduces('*/*'),
    ApiResponse({
      status: 200,
      schema: file,
      headers,
      description: 'The file, with its stored Content-Type, Content-Length, a strong ETag and Cache-Control immutable',
    }),
    ApiResponse({ status: 206, schema: file, headers, description: 'The requested byte range, with Content-Range' }),
    ApiResponse({ status: 304, description: 'If-None-Match matched the ETag' }),
    ApiStorageErrors(
      [HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR: a path segment holds text no id can (a NUL, a lone surrogate)'],
      [HttpStatus.NOT_FOUND, 'NOT_FOUND: unknown, pending or deleted file'],
      [HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, 'RANGE_NOT_SATISFIABLE: the range starts past the end'],
    ),
  );
}

function cdnRequest(request: Request): CdnRequest {
  return {
    method: request.method,
    range: request.get('range'),
    ifNoneMatch: request.get('if-none-match'),
    ifRange: request.get('if-range'),
  };
}

/** setHeader, not res.set: Express would append a charset to text types, changing the stored Content-Type. */
function send(response: Response, result: CdnResponse): void {
  response.status(result.status);
  for (const [name, value] of Object.entries(result.headers)) response.setHeader(name, value);
  if (!result.body) {
    response.end();
    return;
  }
  // A store failure mid-stream can only cut the connection: the status line has gone out.
  pipeline(result.body, response).catch(() => response.destroy());
}
