import { Inject, Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { ifNoneMatchMatches } from '../../common/etag';
import { Sql } from '../../database/sql';
import { StorageRepository } from '../items/storage.repository';
import { isUuid, OBJECT_STORE, ObjectStore } from '../object-store/object-store';
import { StorageErrors } from '../storage.errors';
import { contentDisposition } from './content-disposition';
import { decideRange, ifRangeAllowsRange } from './http-range';

export interface CdnRequest {
  method: string;
  range?: string;
  ifNoneMatch?: string;
  ifRange?: string;
}

export interface CdnResponse {
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  /** Absent for HEAD and 304. */
  body?: Readable;
}

/**
 * GET/HEAD {cdn_url}/c/<organizationId>/<mediaId>: complete files only. A file's bytes never change under
 * its id, so it is cacheable forever and its sha256 is a strong ETag.
 */
@Injectable()
export class CdnService {
  constructor(
    private readonly sql: Sql,
    private readonly repository: StorageRepository,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  async read(organizationId: string, mediaId: string, request: CdnRequest): Promise<CdnResponse> {
    if (!isUuid(organizationId) || !isUuid(mediaId)) throw StorageErrors.fileNotFound();
    const item = await this.repository.findCompleteItem(this.sql, organizationId.toLowerCase(), mediaId.toLowerCase());
    if (!item || !item.checksum) throw StorageErrors.fileNotFound();

    const etag = `"${item.checksum}"`;
    const headers: Record<string, string> = {
      ETag: etag,
      'Cache-Control': 'public, max-age=31536000, immutable',
      'Last-Modified': (item.completedAt ?? item.createdAt).toUTCString(),
      'Accept-Ranges': 'bytes',
      // Files are whatever users uploaded, served from the API's origin: never sniffed, never run as a page
      // (the CSP for browsers that honour its sandbox, Content-Disposition below for the rest).
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    if (ifNoneMatchMatches(request.ifNoneMatch, item.checksum)) return { status: 304, headers };

    headers['Content-Type'] = item.contentType;
    // Anything but passive media is a download, so an uploaded page or SVG never renders on this origin; a named file
    // is offered under its name.
    const disposition = contentDisposition(item.contentType, item.fileName);
    if (disposition) headers['Content-Disposition'] = disposition;
    const decision = ifRangeAllowsRange(request.ifRange, etag) ? decideRange(request.range, item.size) : { kind: 'full' as const };
    if (decision.kind === 'unsatisfiable') {
      throw Object.assign(StorageErrors.rangeNotSatisfiable(item.size), {
        responseHeaders: { 'Content-Range': `bytes */${item.size}` },
      });
    }
    const range = decision.kind === 'partial' ? decision.range : undefined;
    headers['Content-Length'] = String(range ? range.end - range.start + 1 : item.size);
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${item.size}`;
    const status = range ? 206 : 200;
    if (request.method === 'HEAD') return { status, headers };

    // The row says complete, so the bytes exist unless a delete ran in between: then the file is gone.
    const body = await this.store.read(item.objectKey, range);
    if (!body) throw StorageErrors.fileNotFound();
    return { status, headers, body };
  }
}
