import { createHash } from 'node:crypto';
import { Transform, TransformCallback } from 'node:stream';
import { DomainError } from '../../common/domain-error';
import { StorageErrors } from '../storage.errors';

export interface UploadLimits {
  /** Bytes beyond this fail the upload with 413 as soon as they arrive. */
  maxBytes: number;
  /** What the limit is, for the 413 message. */
  limitReason: string;
  /** When the size was declared: fewer bytes fail the upload with 400 at the end. */
  exactBytes?: number;
  /** The error for a body past `maxBytes`, when it is not the 413 PAYLOAD_TOO_LARGE naming `limitReason`. */
  exceeded?: () => DomainError;
}

/**
 * Sits between the request and the object store: counts and hashes the bytes as they stream, and fails the
 * stream the moment the body passes its limit, so the store never commits an oversized or short object.
 */
export class UploadMeter extends Transform {
  bytes = 0;
  /** The first rule the body broke; the upload reports this rather than whatever the store made of it. */
  failure: DomainError | null = null;
  private readonly hash = createHash('sha256');

  constructor(private readonly limits: UploadLimits) {
    // Buffer up to 1 MiB so the store writes in large chunks rather than one syscall per socket read.
    super({ highWaterMark: 1024 * 1024 });
  }

  /** Hex sha256 of everything that passed; valid once the stream has ended. */
  checksum(): string {
    return this.hash.digest('hex');
  }

  /** Fails the stream from outside (the client went away). */
  abort(error: DomainError | Error): void {
    if (error instanceof DomainError && !this.failure) this.failure = error;
    this.destroy(error);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) {
      const error = this.limits.exceeded?.() ?? StorageErrors.tooLarge(this.limits.maxBytes, this.limits.limitReason);
      return callback(this.fail(error));
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const expected = this.limits.exactBytes;
    if (expected !== undefined && this.bytes !== expected) {
      return callback(this.fail(StorageErrors.validation(`The body has ${this.bytes} bytes but the signed URL was issued for ${expected}`)));
    }
    callback();
  }

  private fail(error: DomainError): DomainError {
    this.failure ??= error;
    return error;
  }
}
