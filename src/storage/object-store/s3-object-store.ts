import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { AppConfig } from '../../config/app-config';
import { ByteRange, ObjectStore, StoredObject } from './object-store';
import { writeNewFile } from './write-file';

/**
 * The minio client buffers one part in memory (it signs each request's payload over plain HTTP), so the
 * part size is what bounds an upload's memory. 8 MiB keeps that small; larger files go multipart.
 */
export const DEFAULT_S3_PART_SIZE = 8 * 1024 * 1024;

type S3Settings = NonNullable<AppConfig['s3']>;

/**
 * An S3-compatible bucket (MinIO in production) through the `minio` client, path-style, in the configured
 * region. A PUT of a known size is atomic on S3: the object appears whole or not at all. Bodies of unknown
 * size (multipart form uploads) are spooled to a local temp file first, because the client would otherwise
 * pick a part size of hundreds of megabytes for an unknown length and hold it in memory.
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

  async put(key: string, body: Readable, size?: number): Promise<void> {
    if (size === undefined) return this.putSpooled(key, body);
    if (size === 0) {
      // The client would not read an empty body; reading it lets the caller's checks see any stray byte.
      for await (const _chunk of body) {
        // drained
      }
      await this.client.putObject(this.settings.bucket, key, Buffer.alloc(0), 0);
      return;
    }
    // The client listens for errors on its own part splitter, not on the body: a failing body (aborted
    // upload, size check) must reject here rather than leave the upload hanging or crash the process.
    const bodyFailed = new Promise<never>((_resolve, reject) => body.once('error', reject));
    const upload = this.client.putObject(this.settings.bucket, key, body, size);
    upload.catch(() => undefined);
    bodyFailed.catch(() => undefined);
    try {
      await Promise.race([upload, bodyFailed]);
    } catch (error) {
      if (size > this.partSize) await this.removeIncompleteUpload(key);
      throw error;
    }
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

  async *list(): AsyncIterable<StoredObject> {
    const stream = this.client.listObjectsV2(this.settings.bucket, '', true);
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

  private async removeIncompleteUpload(key: string): Promise<void> {
    try {
      await this.client.removeIncompleteUpload(this.settings.bucket, key);
    } catch (error) {
      this.logger.warn(`could not abort the multipart upload of ${key}: ${(error as Error).message}`);
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

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchObject';
}
