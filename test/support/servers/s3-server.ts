import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface KoaContext {
  method: string;
  query: Record<string, unknown>;
  type: string;
  status: number;
  body: unknown;
}

// s3rver ships without type declarations.
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => {
  /** s3rver is a Koa application: its middleware, in order. */
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>;
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
};

export const S3_BUCKET = 'flagstore-test';

export interface S3Server {
  /** The `S3_*` variables that point the service at this server. */
  env: Record<string, string>;
  /** Multipart uploads of `key` initiated and neither completed nor aborted. */
  openUploads(key: string): string[];
  close(): Promise<void>;
}

/**
 * An S3 store of the test's own: s3rver on a free loopback port with the bucket made. s3rver keeps an open
 * multipart upload as `<bucket>/._S3rver_uploads/<uploadId>/` until it is completed, but implements neither
 * ListMultipartUploads nor AbortMultipartUpload, and accepts a part for an upload that is gone. Here, as on
 * S3 and MinIO: ListMultipartUploads answers "none in progress" (a client looking for an upload to resume
 * goes on), AbortMultipartUpload removes the upload (204, or 404 NoSuchUpload), and UploadPart to an upload
 * that is not open is a 404 NoSuchUpload. `directory` (kept) or a temporary one (removed).
 */
export async function startS3Server(directory?: string): Promise<S3Server> {
  const dir = directory ?? mkdtempSync(join(tmpdir(), 'flagstore-s3rver-'));
  mkdirSync(dir, { recursive: true });
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: S3_BUCKET }] });
  const uploadsDir = join(dir, S3_BUCKET, '._S3rver_uploads');
  const xml = (ctx: KoaContext, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?>${body}`;
  };
  server.middleware.unshift(async (ctx, next) => {
    if (ctx.method === 'GET' && 'uploads' in ctx.query) {
      return xml(ctx, 200, `<ListMultipartUploadsResult><Bucket>${S3_BUCKET}</Bucket><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`);
    }
    const uploadId = ctx.query.uploadId;
    if (typeof uploadId !== 'string' || !/^[0-9a-f]+$/.test(uploadId) || !['PUT', 'DELETE'].includes(ctx.method)) return next();
    const uploadDir = join(uploadsDir, uploadId);
    if (!existsSync(uploadDir)) {
      return xml(ctx, 404, '<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist</Message></Error>');
    }
    if (ctx.method === 'PUT') return next();
    rmSync(uploadDir, { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
  });
  const { port } = await server.run();
  return {
    env: {
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ACCESS_KEY: 'S3RVER',
      S3_SECRET_KEY: 'S3RVER',
      S3_BUCKET,
      S3_REGION: 'us-east-1',
    },
    openUploads: (key) =>
      (existsSync(uploadsDir) ? readdirSync(uploadsDir) : []).filter((id) => {
        const keyFile = join(uploadsDir, id, 'key');
        return existsSync(keyFile) ? readFileSync(keyFile, 'utf8') === key : true;
      }),
    close: async () => {
      await server.close();
      if (!directory) rmSync(dir, { recursive: true, force: true });
    },
  };
}
