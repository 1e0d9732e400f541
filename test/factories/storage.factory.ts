import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import request from 'supertest';
import { OBJECT_STORE, ObjectStore, objectKeyFor } from '../../src/storage/object-store/object-store';
import { startS3Server } from '../support/servers/s3-server';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, TestOrganization } from './organizations.factory';

export type Driver = 'local' | 's3';
export const DRIVERS: Driver[] = ['local', 's3'];

export interface StorageTestApp extends TestApp {
  driver: Driver;
  store: ObjectStore;
}

/** The real app on the given driver; for S3, a loopback s3rver on a temp directory, stopped by close(). */
export async function createStorageTestApp(driver: Driver, env: Record<string, string> = {}): Promise<StorageTestApp> {
  const s3 = driver === 's3' ? await startS3Server() : undefined;
  const t = await createTestApp({ ...s3?.env, ...env });
  return {
    ...t,
    driver,
    store: t.app.get<ObjectStore>(OBJECT_STORE),
    close: async () => {
      await t.close();
      await s3?.close();
    },
  };
}

export interface SignedUrl {
  url: string;
  expiresAt: string;
  mediaId?: string;
  mediaUrl?: string;
}

/** Path and query of an absolute URL the service handed out, for supertest. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

export async function signedUrl(t: TestApp, org: TestOrganization, query: Record<string, string | number> = {}): Promise<SignedUrl> {
  const response = await request(t.http).get('/v1/storage/signed-url').query(query).set(bearer(org.key)).expect(200);
  return response.body as SignedUrl;
}

export function put(t: TestApp, url: string, body: Buffer, contentType: string) {
  return request(t.http).put(pathOf(url)).set('Content-Type', contentType).send(body);
}

export function post(t: TestApp, url: string, file: Buffer, options: { filename?: string; contentType?: string; metadata?: string } = {}) {
  const call = request(t.http).post(pathOf(url));
  if (options.metadata !== undefined) call.field('metadata', options.metadata);
  return call.attach('file', file, { filename: options.filename ?? 'file.bin', contentType: options.contentType ?? 'application/octet-stream' });
}

/** Signs a pre-allocated URL and uploads `body` to it; returns the upload's answer. */
export async function uploadFile(t: TestApp, org: TestOrganization, body: Buffer, contentType = 'image/png', metadata?: object) {
  const signed = await signedUrl(t, org, {
    contentType,
    size: body.length,
    ...(metadata ? { metadata: JSON.stringify(metadata) } : {}),
  });
  const response = await put(t, signed.url, body, contentType).expect(200);
  return response.body as { id: string; kind: string; size: number; state: string; mediaUrl: string; createdAt: string };
}

/** Whether the store holds a committed object for the item. */
export async function storedObject(t: StorageTestApp, organizationId: string, itemId: string): Promise<boolean> {
  return (await storedKeys(t)).includes(objectKeyFor(organizationId, itemId));
}

export async function readStoredObject(t: StorageTestApp, organizationId: string, itemId: string): Promise<Buffer | null> {
  const stream = await t.store.read(objectKeyFor(organizationId, itemId));
  if (!stream) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function storedKeys(t: StorageTestApp): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of t.store.list()) keys.push(object.key);
  return keys.sort();
}

/** Random bytes: a mix-up of two files' bytes cannot go unnoticed. */
export function bytes(size: number): Buffer {
  return randomBytes(size);
}

export interface RawUpload {
  /** Sends more of the body. */
  write(chunk: Buffer): Promise<void>;
  /** Finishes the body and resolves with the status and parsed body. */
  finish(): Promise<{ status: number; body: unknown }>;
  /** The answer, whenever it comes: before the body is finished too (a refusal, a timeout). */
  answer: Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }>;
  /** Cuts the connection mid-body, like a client that went away. */
  abort(): void;
}

/** A PUT whose body the test sends piece by piece, to interleave it with other requests. */
export function rawPut(t: TestApp, url: string, contentType: string, contentLength: number | null): RawUpload {
  return rawRequest(t, 'PUT', url, {
    'Content-Type': contentType,
    ...(contentLength === null ? {} : { 'Content-Length': String(contentLength) }),
  });
}

/** Without Content-Length the body goes chunked, so only the bytes themselves tell the server the size. */
export function rawRequest(t: TestApp, method: string, url: string, headers: Record<string, string>): RawUpload {
  const address = t.http.address() as { port: number };
  const outgoing = httpRequest({ host: '127.0.0.1', port: address.port, method, path: pathOf(url), headers });
  const response = new Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: incoming.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: incoming.headers });
      });
    });
    outgoing.on('error', reject);
  });
  response.catch(() => undefined);
  return {
    write: (chunk) => new Promise((resolve, reject) => outgoing.write(chunk, (error) => (error ? reject(error) : resolve()))),
    finish: () => {
      outgoing.end();
      return response;
    },
    abort: () => outgoing.destroy(),
    answer: response,
  };
}

/**
 * The temporary files the driver keeps while an upload streams, read from disk: the local driver writes
 * every upload to `objects/.tmp` before renaming it into place; the S3 driver spools bodies of unknown size
 * (multipart form uploads) to `upload-spool` before sending them to the bucket. Each must be gone once
 * its upload has answered, whatever the outcome.
 */
export async function temporaryFiles(t: StorageTestApp): Promise<string[]> {
  const directory = t.driver === 's3' ? join(t.config.dataDir, 'upload-spool') : join(t.config.dataDir, 'objects', '.tmp');
  try {
    return await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
