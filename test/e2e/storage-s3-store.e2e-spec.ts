import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { objectKeyFor } from '../../src/storage/object-store/object-store';
import { S3ObjectStore } from '../../src/storage/object-store/s3-object-store';
import { S3_BUCKET, startS3Server } from '../support/servers/s3-server';

const MiB = 1024 * 1024;
/** The smallest part S3 (and the minio client) accepts. */
const PART_SIZE = 5 * MiB;

/** The store's settings for a startS3Server(), and what the test looks at of it. */
async function startS3rverWithMultipart() {
  const server = await startS3Server();
  const { S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION } = server.env;
  return {
    settings: { endPoint: S3_ENDPOINT, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY, bucket: S3_BUCKET, region: S3_REGION },
    openUploads: server.openUploads,
    close: server.close,
  };
}

/**
 * A body that sends `bytesBeforeFailure` bytes in 256 KiB chunks and then fails, like a client cut off
 * mid-upload (the upload host's meter is destroyed with an error), or ends without an error when `error`
 * is null (destroyed without a reason).
 */
function failingBody(bytesBeforeFailure: number, error: Error | null = new Error('the client went away')): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytesBeforeFailure) {
        // A tick later, so that the store is waiting for more when the failure arrives.
        setTimeout(() => this.destroy(error ?? undefined), 20);
        return;
      }
      const chunk = randomBytes(Math.min(256 * 1024, bytesBeforeFailure - sent));
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

/** Rejects with what `promise` rejected with, or with "did not settle" after `ms`. */
function settlesWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('S3 object store against s3rver: bodies that fail mid-stream', () => {
  let s3: Awaited<ReturnType<typeof startS3rverWithMultipart>>;
  let spool: string;
  let store: S3ObjectStore;
  beforeAll(async () => {
    s3 = await startS3rverWithMultipart();
    spool = mkdtempSync(join(tmpdir(), 'flagstore-s3-abort-spool-'));
    store = new S3ObjectStore(s3.settings, spool, PART_SIZE);
    await store.init();
  });
  afterAll(async () => {
    await s3.close();
    rmSync(spool, { recursive: true, force: true });
  });

  const newKey = () => objectKeyFor(randomUUID(), randomUUID());
  const stored = async (key: string) => (await store.read(key)) !== null;
  /** Nothing may turn up later either: a part still in flight must not reopen or complete anything. */
  const expectNothingLeft = async (key: string) => {
    for (const wait of [0, 300]) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      expect(s3.openUploads(key)).toEqual([]);
      expect(await stored(key)).toBe(false);
    }
  };

  it.each([
    ['in its second part', PART_SIZE + 2 * MiB],
    ['in its third part', 2 * PART_SIZE + MiB],
    ['right after its first whole part', PART_SIZE],
  ])('a multipart upload whose body fails %s rejects promptly, aborts the upload and stores nothing', async (_when, bytesBeforeFailure) => {
    const key = newKey();
    const body = failingBody(bytesBeforeFailure);
    await expect(settlesWithin(store.put(key, body, 4 * PART_SIZE), 5_000)).rejects.toThrow('the client went away');
    expect(body.destroyed).toBe(true);
    await expectNothingLeft(key);
  });

  it('a multipart upload whose body is destroyed without an error rejects too', async () => {
    const key = newKey();
    await expect(settlesWithin(store.put(key, failingBody(PART_SIZE + MiB, null), 3 * PART_SIZE), 5_000)).rejects.toThrow();
    await expectNothingLeft(key);
  });

  it('a single-part upload whose body fails rejects promptly and stores nothing', async () => {
    const key = newKey();
    await expect(settlesWithin(store.put(key, failingBody(MiB), 3 * MiB), 5_000)).rejects.toThrow('the client went away');
    await expectNothingLeft(key);
  });

  it('a body of unknown size (spooled) that fails stores nothing and leaves no spool file', async () => {
    const key = newKey();
    await expect(settlesWithin(store.put(key, failingBody(PART_SIZE + MiB)), 5_000)).rejects.toThrow('the client went away');
    await expectNothingLeft(key);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('stores whole bodies of every shape, and leaves no upload open', async () => {
    for (const size of [0, 1, PART_SIZE - 1, PART_SIZE, PART_SIZE + 1, 2 * PART_SIZE + 12345]) {
      const key = newKey();
      const bytes = randomBytes(size);
      // Uneven chunks, so that parts are cut across chunk boundaries.
      const chunks: Buffer[] = [];
      for (let offset = 0; offset < size; offset += 777_777) chunks.push(bytes.subarray(offset, offset + 777_777));
      await store.put(key, Readable.from(chunks), size);
      const read = await store.read(key);
      const back: Buffer[] = [];
      for await (const chunk of read!) back.push(chunk as Buffer);
      expect({ size, equal: Buffer.concat(back).equals(bytes), open: s3.openUploads(key) }).toEqual({ size, equal: true, open: [] });
    }
  });
});
