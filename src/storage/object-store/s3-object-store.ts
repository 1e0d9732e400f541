import { Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { AppConfig } from '../../config/app-config';
import { ByteRange, ObjectStore, PROBE_KEY, StoredObject } from './object-store';
import { writeNewFile } from './write-file';

/**
 * An upload holds one part in memory (each request's payload is signed, so it is read whole before it is
 * sent), so the part size is what bounds an upload's memory. 8 MiB keeps that small; larger files go multipart.
 */
export const DEFAULT_S3_PART_SIZE = 8 * 1024 * 1024;

type S3Settings = NonNullable<AppConfig['s3']>;

/**
 * An S3-compatible bucket (MinIO in production) through the `minio` client, path-style, in the configured
 * region. A PUT, or a multipart upload, is atomic on S3: the object appears whole (once completed) or not at
 * all. Bodies of unknown size (multipart form uploads) are spooled to a local temp file first: the part size
 * depends on the size (S3 takes at most 10,000 parts), and a body that fits in one part goes in one PUT.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly logger = new Logger('S3ObjectStore');
  private readonly client: Client;

  /** Files up to `partSize` go in one PUT, larger ones multipart. */
  constructor(
    private readonly settings: S3Settings,
    private readonly spoolDir: string,
    private readonly partSize = DEFAULT_S3_PART_SIZE,
  ) {
    this.client = this.createClient();
  }

  async init(): Promise<void> {
    await mkdir(this.spoolDir, { recursive: true, mode: 0o700 });
    if (!(await this.client.bucketExists(this.settings.bucket))) {
      await this.client.makeBucket(this.settings.bucket, this.settings.region);
    }
  }

  /** Usable while the bucket answers a read (of a key that is never there). */
  async checkUsable(): Promise<void> {
    const found = await this.read(PROBE_KEY);
    found?.destroy();
  }

  async put(key: string, body: Readable, size?: number): Promise<void> {
    if (size === undefined) return this.putSpooled(key, body);
    if (size <= this.partSize) {
      // One PUT of the whole body, read first (at most one part): nothing reaches the bucket unless the body
      // ended well, and reading it lets the caller's checks see every byte, a stray one included.
      const whole = await readAll(body, size);
      await this.client.putObject(this.settings.bucket, key, whole, whole.length);
      return;
    }
    await this.putMultipart(key, body, partSizeFor(size, this.partSize));
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      return range
        ? await this.client.getPartialObject(this.settings.bucket, key, range.start, range.end - range.start + 1)
        : await this.client.getObject(this.settings.bucket, key);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.removeObject(this.settings.bucket, key);
  }

  /** S3 lists keys in UTF-8 byte order; StartAfter resumes after any key, present in the bucket or not. */
  async *list(after?: string): AsyncIterable<StoredObject> {
    const stream = this.client.listObjectsV2(this.settings.bucket, '', true, after ?? '');
    for await (const item of stream as AsyncIterable<{ name?: string; lastModified?: Date }>) {
      if (item.name && item.lastModified) yield { key: item.name, lastModified: item.lastModified };
    }
  }

  async sweepTemporary(before: Date): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.spoolDir).catch(() => [] as string[])) {
      const path = join(this.spoolDir, name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtime < before) {
        await unlink(path).catch(() => undefined);
        removed += 1;
      }
    }
    return removed;
  }

  private async putSpooled(key: string, body: Readable): Promise<void> {
    const spool = join(this.spoolDir, randomUUID());
    try {
      await writeNewFile(body, spool);
      const { size } = await stat(spool);
      await this.put(key, createReadStream(spool), size);
    } finally {
      await unlink(spool).catch(() => undefined);
    }
  }

  /**
   * A multipart upload driven here rather than by the client's putObject, which pipes the body into its own
   * part splitter without listening for the body's errors: a body that failed mid-stream left its upload
   * waiting forever for the rest, and the multipart upload open in the bucket (found again only by listing,
   * which races with the client initiating it). Here each part is read, then sent; the upload is initiated
   * once a first whole part is in hand, so a body that fails before that costs the bucket nothing. When
   * anything fails (the body, a part, the completion), leaving the loop destroys the body, no part is in
   * flight any more, and the upload is aborted by its id before put rejects.
   */
  private async putMultipart(key: string, body: Readable, partSize: number): Promise<void> {
    const { bucket } = this.settings;
    let uploadId: string | undefined;
    try {
      const etags: Array<{ part: number; etag: string }> = [];
      for await (const part of partsOf(body, partSize)) {
        uploadId ??= await this.client.initiateNewMultipartUpload(bucket, key, {});
        const partNumber = etags.length + 1;
        const { etag } = await this.client.uploadPart(
          {
            bucketName: bucket,
            objectName: key,
            uploadID: uploadId,
            partNumber,
            headers: { 'Content-MD5': createHash('md5').update(part).digest('base64') },
          },
          part,
        );
        etags.push({ part: partNumber, etag });
      }
      if (!uploadId) throw new Error('the body ended before its first part'); // put() sends small bodies whole
      await this.client.completeMultipartUpload(bucket, key, uploadId, etags);
    } catch (error) {
      body.destroy();
      if (uploadId) await this.abortMultipartUpload(key, uploadId);
      throw error;
    }
  }

  private async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.abortMultipartUpload(this.settings.bucket, key, uploadId);
    } catch (error) {
      // The bucket's own expiry of stale uploads (MinIO: api.stale_uploads_expiry, 24 h) removes it later.
      this.logger.warn(`could not abort the multipart upload ${uploadId} of ${key}: ${(error as Error).message}`);
    }
  }

  private createClient(): Client {
    const endpoint = new URL(this.settings.endPoint);
    const useSSL = endpoint.protocol === 'https:';
    return new Client({
      endPoint: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: this.settings.accessKey,
      secretKey: this.settings.secretKey,
      region: this.settings.region,
      pathStyle: true,
      partSize: this.partSize,
    });
  }
}

/** S3 takes at most 10,000 parts: larger objects need parts above the configured size (whole MiB). */
function partSizeFor(size: number, partSize: number): number {
  const MiB = 1024 * 1024;
  return Math.max(partSize, Math.ceil(size / 10_000 / MiB) * MiB);
}

/** The whole body in one buffer; one that passes its declared `size` is refused rather than held. */
async function readAll(body: Readable, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > size) throw new Error(`the body is longer than its declared ${size} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The body cut into parts of exactly `partSize` bytes (the last one shorter, never empty), each copied into
 * a buffer of its own as it arrives, so memory holds one part. The generator reads the body with for-await:
 * an error or a premature close of the body rejects it, and a consumer that stops early destroys the body.
 */
async function* partsOf(body: Readable, partSize: number): AsyncGenerator<Buffer> {
  let part = Buffer.allocUnsafe(partSize);
  let filled = 0;
  for await (const data of body) {
    const chunk = data as Buffer;
    let offset = 0;
    while (offset < chunk.length) {
      const copied = chunk.copy(part, filled, offset);
      filled += copied;
      offset += copied;
      if (filled === partSize) {
        yield part;
        part = Buffer.allocUnsafe(partSize);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield part.subarray(0, filled);
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchObject';
}
