import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface KoaContext {
  method: string;
  query: Record<string, unknown>;
  type: string;
  body: unknown;
}

// s3rver ships without type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
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
  close(): Promise<void>;
}

/**
 * An S3 store of the test's own: s3rver on a free loopback port with the bucket made. s3rver implements
 * multipart uploads but not ListMultipartUploads, which the minio client calls before each one (to resume an
 * earlier upload of the same key); answering "none in progress" lets the service take its multipart path
 * (files above the 8 MiB part size) as it would against MinIO. `directory` (kept) or a temporary one (removed).
 */
export async function startS3Server(directory?: string): Promise<S3Server> {
  const dir = directory ?? mkdtempSync(join(tmpdir(), 'flagstore-s3rver-'));
  mkdirSync(dir, { recursive: true });
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: S3_BUCKET }] });
  server.middleware.unshift(async (ctx, next) => {
    if (ctx.method !== 'GET' || !('uploads' in ctx.query)) return next();
    ctx.type = 'application/xml';
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>' +
      `<ListMultipartUploadsResult><Bucket>${S3_BUCKET}</Bucket><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`;
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
    close: async () => {
      await server.close();
      if (!directory) rmSync(dir, { recursive: true, force: true });
    },
  };
}
