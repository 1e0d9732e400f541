import { OrganizationEvents } from '../../events/organization-events';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { CLOCK, Clock } from '../../common/clock';
import { DomainError } from '../../common/domain-error';
import { timeoutOf } from '../../http/http-timeouts';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { StorageMetrics } from '../storage.metrics';
import { Sql } from '../../database/sql';
import { mediaUrl } from '../cdn/media-url';
import { UploadedItemDto } from '../items/dto/storage-item.dto';
import { StorageMetadata } from '../items/storage-item';
import { kindOfContentType, normalizeContentType } from '../items/storage-kind';
import { METADATA_MAX_BYTES, parseMetadata } from '../items/storage-metadata';
import { fileNameProblem } from '../items/file-name';
import { StorageAllocation } from '../items/storage-allocation';
import { StorageRepository } from '../items/storage.repository';
import { OBJECT_STORE, ObjectStore, objectKeyFor } from '../object-store/object-store';
import { StorageErrors } from '../storage.errors';
import { SignedUrls, UploadQuery } from './signed-urls';
import { UploadLimits, UploadMeter } from './upload-meter';
import { Transactions } from '../../database/transactions';
import { WebhookEvents } from '../../webhooks/webhook-events';

/**
 * The multipart metadata field as sent. The 2048-byte rule (METADATA_MAX_BYTES) is on the metadata as
 * compact JSON, which parseMetadata checks; the field itself may be longer (whitespace, \u escapes), so the
 * parser only stops a field too long to be worth reading.
 */
const METADATA_FIELD_MAX_BYTES = 64 * 1024;

/**
 * The upload host: requests carry no bearer header, only the signed URL. Bytes stream from the request
 * through an UploadMeter (size limit, sha256) into the object store, which commits them atomically; the row
 * becomes `complete` only after that, in one conditional statement. A URL is claimed in the database before
 * any byte is read, so two uploads to one URL give one success and one 409; a failed upload gives the claim
 * back and leaves no object. With STORAGE_ENFORCE_ALLOCATION, a non-allocated upload streams with the room
 * left in the allocation as its limit and is checked again, atomically, when its row is written
 * (StorageAllocation); a pre-allocated one reserved its bytes when its URL was issued.
 */
@Injectable()
export class UploadService {
  private readonly logger = new Logger(UploadService.name);

  constructor(
    private readonly sql: Sql,
    private readonly repository: StorageRepository,
    private readonly signedUrls: SignedUrls,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly allocation: StorageAllocation,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly events: OrganizationEvents,
    private readonly transactions: Transactions,
    private readonly webhooks: WebhookEvents,
    @Optional() private readonly metrics?: StorageMetrics,
  ) {}

  /** PUT {upload_url}/<organizationId>/<mediaId>: the raw bytes of a pre-allocated item. */
  uploadPreallocated(organizationId: string, mediaId: string, query: UploadQuery, request: IncomingMessage): Promise<UploadedItemDto> {
    return this.measured(this.receivePreallocated(organizationId, mediaId, query, request));
  }

  /** POST {upload_url}/<organizationId>: multipart form with `file` and optional `metadata`. */
  uploadNonAllocated(organizationId: string, query: UploadQuery, request: IncomingMessage): Promise<UploadedItemDto> {
    return this.measured(this.receiveNonAllocated(organizationId, query, request));
  }

  /** Counts the bytes of a stored upload, or the failure by its error code. */
  private async measured(upload: Promise<UploadedItemDto>): Promise<UploadedItemDto> {
    try {
      const item = await upload;
      this.metrics?.uploadBytes.inc(item.size);
      return item;
    } catch (error) {
      // Domain errors by their code; anything else (a store or database fault) as one bucket.
      this.metrics?.uploadFailures.inc({ code: error instanceof DomainError ? error.code : 'UNEXPECTED' });
      throw error;
    }
  }

  private async receivePreallocated(organizationId: string, mediaId: string, query: UploadQuery, request: IncomingMessage): Promise<UploadedItemDto> {
    const grant = this.signedUrls.verifyPreallocated(organizationId, mediaId, query, this.clock.now());
    const contentType = normalizeContentType(request.headers['content-type']);
    if (contentType !== grant.contentType) {
      throw StorageErrors.validation(`Content-Type must be ${grant.contentType}, as the signed URL was issued for`);
    }
    // A URL signed before MAX_UPLOAD_BYTES was lowered can declare more than the service now takes.
    const { maxUploadBytes } = this.config.storage;
    if (grant.size > maxUploadBytes) throw StorageErrors.tooLarge(maxUploadBytes, 'MAX_UPLOAD_BYTES');
    const limitReason = 'the size the URL was signed for';
    const declaredLength = contentLength(request);
    if (declaredLength !== null && declaredLength > grant.size) throw StorageErrors.tooLarge(grant.size, limitReason);
    if (declaredLength !== null && declaredLength < grant.size) {
      throw StorageErrors.validation(`The body has ${declaredLength} bytes but the signed URL was issued for ${grant.size}`);
    }

    const claimed = await this.repository.claimPending(this.sql, organizationId, mediaId);
    if (!claimed) {
      const item = await this.repository.findItem(this.sql, organizationId, mediaId);
      throw item ? StorageErrors.uploadUrlUsed() : StorageErrors.uploadTargetGone(mediaId);
    }

    const meter = new UploadMeter({ maxBytes: grant.size, limitReason, exactBytes: grant.size });
    try {
      await this.streamInto(request, meter, claimed.objectKey, grant.size, () => abortReason(request));
    } catch (error) {
      await this.repository.releaseClaim(this.sql, organizationId, mediaId);
      throw error;
    }

    let completed;
    try {
      completed = await this.transactions.run(async (tx) => {
        const item = await this.repository.completePending(tx, organizationId, mediaId, meter.checksum());
        if (item) await this.webhooks.storageChanged(tx, organizationId, { ids: [mediaId], change: 'uploaded' });
        return item;
      });
    } catch (error) {
      await this.discard(claimed.objectKey);
      await this.repository.releaseClaim(this.sql, organizationId, mediaId).catch(() => undefined);
      throw error;
    }
    if (!completed) {
      // Deleted or purged while the bytes streamed: the delete already ran, so these bytes are ours to remove.
      await this.discard(claimed.objectKey);
      throw StorageErrors.uploadTargetGone(mediaId);
    }
    this.events.announce(organizationId, { type: 'storage', ids: [mediaId], change: 'uploaded' });
    return UploadedItemDto.fromUpload(completed, mediaUrl(this.config.urls.cdnUrl, organizationId, mediaId));
  }

  private async receiveNonAllocated(organizationId: string, query: UploadQuery, request: IncomingMessage): Promise<UploadedItemDto> {
    const grant = this.signedUrls.verifyNonAllocated(organizationId, query, this.clock.now());
    if (!/^multipart\/form-data\s*;/i.test(request.headers['content-type'] ?? '')) {
      throw StorageErrors.validation('The upload must be multipart/form-data with a file field named "file"');
    }
    if (!(await this.repository.claimNonce(this.sql, organizationId, grant.nonce, new Date(grant.expiresAt * 1000)))) {
      throw StorageErrors.uploadUrlUsed();
    }

    const itemId = randomUUID();
    const objectKey = objectKeyFor(organizationId, itemId);
    try {
      // With STORAGE_ENFORCE_ALLOCATION, the file may take no more than the room left now (checked again below).
      const { maxUploadBytes } = this.config.storage;
      let limits: UploadLimits = { maxBytes: maxUploadBytes, limitReason: 'MAX_UPLOAD_BYTES' };
      const usage = await this.allocation.usageNow(organizationId);
      if (usage && usage.allocation - usage.reserved < maxUploadBytes) {
        const room = Math.max(0, usage.allocation - usage.reserved);
        limits = {
          maxBytes: room,
          limitReason: 'the room left in the storage allocation',
          exceeded: () => StorageErrors.allocationRoomExceeded(usage),
        };
      }
      const form = await this.receiveForm(request, objectKey, limits);
      if (!form.file) throw StorageErrors.validation('file is required: send the file as a multipart file part named "file"');
      let metadata: StorageMetadata | null = null;
      if (form.metadata !== undefined) {
        const result = parseMetadata(form.metadata);
        if (!result.ok) throw StorageErrors.validation(result.message);
        metadata = result.metadata;
      }
      const contentType = normalizeContentType(form.file.mimeType) ?? 'application/octet-stream';
      const file = form.file;
      const item = await this.allocation.withinAllocation(organizationId, file.bytes, async (tx) => {
        const created = await this.repository.createComplete(
          tx,
          {
            id: itemId,
            organizationId,
            kind: kindOfContentType(contentType),
            size: file.bytes,
            contentType,
            metadata,
            fileName: file.name,
            objectKey,
          },
          file.checksum,
        );
        await this.webhooks.storageChanged(tx, organizationId, { ids: [itemId], change: 'uploaded' });
        return created;
      });
      this.events.announce(organizationId, { type: 'storage', ids: [itemId], change: 'uploaded' });
      return UploadedItemDto.fromUpload(item, mediaUrl(this.config.urls.cdnUrl, organizationId, itemId));
    } catch (error) {
      // The key is fresh, so whatever is under it is this upload's (deleting nothing is not an error).
      await this.discard(objectKey);
      await this.repository.releaseNonce(this.sql, organizationId, grant.nonce);
      throw error;
    }
  }

  /** Streams `source` through `meter` into the store; rejects with the rule the body broke, if any. */
  private async streamInto(
    source: Readable,
    meter: UploadMeter,
    objectKey: string,
    size?: number,
    aborted: () => DomainError = () => StorageErrors.uploadAborted(),
  ): Promise<void> {
    // Closed before its end: the client went away or was cut off (a request), or the multipart parser gave up (a file part).
    const onClose = () => {
      if (!source.readableEnded) meter.abort(aborted());
    };
    const onError = () => meter.abort(aborted());
    source.once('close', onClose);
    source.once('error', onError);
    source.pipe(meter);
    try {
      await this.store.put(objectKey, meter, size);
    } catch (error) {
      // Let the rest of the body drain so that a client still sending can read the error response.
      source.unpipe(meter);
      source.resume();
      throw meter.failure ?? error;
    } finally {
      source.off('close', onClose);
      source.off('error', onError);
    }
  }

  /**
   * Parses the multipart body as it arrives; the file part streams straight into the store. Resolves once
   * the whole body is read and the file is committed, or rejects with the first rule broken (after the
   * store has given up on the file, so the caller can remove whatever it left).
   */
  private receiveForm(request: IncomingMessage, objectKey: string, limits: UploadLimits): Promise<ReceivedForm> {
    return new Promise<ReceivedForm>((resolve, reject) => {
      const form: ReceivedForm = {};
      let parser: busboy.Busboy;
      try {
        // Browsers send a part's filename as raw UTF-8 (busboy would read it as Latin-1); filename* is decoded either way.
        parser = busboy({
          headers: request.headers,
          defParamCharset: 'utf8',
          limits: { files: 1, fields: 1, fieldSize: METADATA_FIELD_MAX_BYTES },
        });
      } catch {
        return reject(StorageErrors.validation('The multipart body has no valid boundary'));
      }
      let upload: Promise<void> = Promise.resolve();
      let meter: UploadMeter | null = null;
      let failure: Error | null = null;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        request.off('close', onClose);
        void upload.then(() => (failure ? reject(failure) : resolve(form)));
      };
      const fail = (error: Error) => {
        if (failure) return;
        failure = error;
        meter?.abort(error);
        request.unpipe(parser);
        request.resume();
        finish();
      };
      const onClose = () => {
        if (!request.complete) fail(abortReason(request));
      };

      parser.on('file', (name, stream, info) => {
        // Parts the parser had buffered can still surface after a failure; they must not start a store write.
        if (failure) return stream.resume();
        if (name !== 'file') {
          stream.resume();
          return fail(StorageErrors.validation(`Unexpected file field "${name}": the file goes in the field named "file"`));
        }
        // The part's filename names the file (busboy keeps its last path segment, as browsers send it); an empty
        // one names nothing. A name the API would refuse as fileName is refused here too, before a byte is stored.
        const fileName = info.filename === undefined || info.filename === '' ? null : info.filename;
        const problem = fileName === null ? null : fileNameProblem(fileName);
        if (problem) {
          stream.resume();
          return fail(StorageErrors.validation(`The file part's filename (the item's fileName) ${problem}`));
        }
        const fileMeter = new UploadMeter(limits);
        meter = fileMeter;
        upload = this.streamInto(stream, fileMeter, objectKey).then(
          () => {
            form.file = { mimeType: info.mimeType, name: fileName, bytes: fileMeter.bytes, checksum: fileMeter.checksum() };
          },
          (error: Error) => {
            stream.resume();
            fail(error);
          },
        );
      });
      parser.on('field', (name, value, info) => {
        if (failure) return;
        if (name === 'file') return fail(StorageErrors.validation('file must be sent as a file part (with a filename), not as a text field'));
        if (name !== 'metadata') return fail(StorageErrors.validation(`Unexpected field "${name}": only "file" and "metadata" are accepted`));
        if (info.valueTruncated) {
          return fail(
            StorageErrors.validation(
              `The metadata field must be at most ${METADATA_FIELD_MAX_BYTES} bytes (the metadata itself at most ${METADATA_MAX_BYTES} bytes as compact JSON)`,
            ),
          );
        }
        form.metadata = value;
      });
      parser.on('filesLimit', () => fail(StorageErrors.validation('Only one file may be uploaded per URL')));
      parser.on('fieldsLimit', () => fail(StorageErrors.validation('Only one metadata field is accepted')));
      parser.on('error', (error: Error) => fail(StorageErrors.validation(`Malformed multipart body: ${error.message}`)));
      parser.on('close', finish);
      request.on('close', onClose);
      request.pipe(parser);
    });
  }

  /** Removes bytes that will not get a row; if this fails, the sweeper's orphan pass removes them. */
  private async discard(objectKey: string): Promise<void> {
    await this.store.delete(objectKey).catch((error: Error) => this.logger.warn(`left ${objectKey} for the sweeper: ${error.message}`));
  }
}

interface ReceivedForm {
  file?: { mimeType: string; name: string | null; bytes: number; checksum: string };
  metadata?: string;
}

/** Why a request's body ended early: cut off by its idle timeout (408), or the client went away. */
function abortReason(request: IncomingMessage): DomainError {
  return timeoutOf(request) ?? StorageErrors.uploadAborted();
}

function contentLength(request: IncomingMessage): number | null {
  const header = request.headers['content-length'];
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : null;
}
