import { createHash, randomUUID } from 'node:crypto';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import request from 'supertest';
import { objectKeyFor } from '../../src/storage/object-store/object-store';
import { NONCE_CLOCK_SKEW_MS, StorageSweeper } from '../../src/storage/sweeper/storage-sweeper';
import { bearer, createOrganization } from '../factories/organizations.factory';
import {
  bytes,
  createStorageTestApp,
  DRIVERS,
  pathOf,
  post,
  put,
  signedUrl,
  storedKeys,
  storedObject,
  StorageTestApp,
  temporaryFiles,
  uploadFile,
} from '../factories/storage.factory';

const binary = (call: request.Test) =>
  call.buffer(true).parse((response, callback) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => callback(null, Buffer.concat(chunks)));
  });

describe.each(DRIVERS)('CDN route and sweeper (%s driver)', (driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp(driver);
  });
  afterAll(() => t.close());

  const expectNotFound = (response: request.Response) => {
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  };

  describe('GET/HEAD /c/<organizationId>/<mediaId>', () => {
    it('streams the file with its type, length, a strong ETag and immutable caching', async () => {
      const org = await createOrganization(t);
      const body = bytes(5000);
      const item = await uploadFile(t, org, body, 'text/plain');
      expect(item.mediaUrl.startsWith(`${t.config.urls.cdnUrl}/c/${org.id}/`)).toBe(true);
      const response = await binary(request(t.http).get(pathOf(item.mediaUrl))).expect(200);
      expect((response.body as Buffer).equals(body)).toBe(true);
      expect(response.headers).toMatchObject({
        'content-type': 'text/plain',
        'content-length': '5000',
        etag: `"${createHash('sha256').update(body).digest('hex')}"`,
        'cache-control': 'public, max-age=31536000, immutable',
        'accept-ranges': 'bytes',
        'x-content-type-options': 'nosniff',
      });
      expect(response.headers['last-modified']).toEqual(expect.any(String));

      const head = await request(t.http).head(pathOf(item.mediaUrl)).expect(200);
      expect(head.headers).toMatchObject({ 'content-length': '5000', etag: response.headers.etag, 'content-type': 'text/plain' });
      expect(head.text ?? '').toBe('');
    });

    it('serves HTML, SVG and other non-media as attachments, images, audio and video inline; nosniff and the CSP on all', async () => {
      const org = await createOrganization(t);
      const html = Buffer.from('<!doctype html><script>fetch("/v1/flags").then(r => r.text()).then(alert)</script>');
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>');
      const cases: Array<[string, Buffer, string | undefined]> = [
        ['text/html', html, 'attachment'],
        ['text/html;charset=utf-8', html, 'attachment'],
        ['image/svg+xml', svg, 'attachment'],
        ['application/xhtml+xml', html, 'attachment'],
        ['application/pdf', bytes(50), 'attachment'],
        ['text/plain', bytes(50), 'attachment'],
        ['image/png', bytes(50), undefined],
        ['audio/ogg', bytes(50), undefined],
        ['video/mp4', bytes(50), undefined],
      ];
      for (const [contentType, body, disposition] of cases) {
        const item = await uploadFile(t, org, body, contentType);
        for (const response of [
          await binary(request(t.http).get(pathOf(item.mediaUrl))).expect(200),
          await request(t.http).head(pathOf(item.mediaUrl)).expect(200),
          await binary(request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=0-9')).expect(206),
        ]) {
          expect({ contentType, disposition: response.headers['content-disposition'] }).toEqual({ contentType, disposition });
          expect(response.headers['content-type']).toBe(contentType);
          expect(response.headers['x-content-type-options']).toBe('nosniff');
          expect(response.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
        }
      }
      // A non-allocated upload takes its type from the file part: the same rule applies.
      const signed = await signedUrl(t, org);
      const posted = await post(t, signed.url, svg, { filename: 'x.svg', contentType: 'image/svg+xml' }).expect(201);
      const download = await request(t.http).get(pathOf(posted.body.mediaUrl)).expect(200);
      expect(download.headers['content-disposition']).toBe(`attachment; filename="x.svg"; filename*=UTF-8''x.svg`);
    });

    it('answers 304 to a matching If-None-Match, repeating ETag and Cache-Control', async () => {
      const org = await createOrganization(t);
      const item = await uploadFile(t, org, bytes(100), 'image/png');
      const etag = (await request(t.http).get(pathOf(item.mediaUrl)).expect(200)).headers.etag;
      for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const response = await request(t.http).get(pathOf(item.mediaUrl)).set('If-None-Match', header).expect(304);
        expect(response.headers.etag).toBe(etag);
        expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(response.text ?? '').toBe('');
      }
      await request(t.http).get(pathOf(item.mediaUrl)).set('If-None-Match', '"other"').expect(200);
    });

    it('answers 206 to a Range and 416 to one past the end', async () => {
      const org = await createOrganization(t);
      const body = bytes(1000);
      const item = await uploadFile(t, org, body, 'video/mp4');
      const part = await binary(request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=100-199')).expect(206);
      expect((part.body as Buffer).equals(body.subarray(100, 200))).toBe(true);
      expect(part.headers).toMatchObject({ 'content-range': 'bytes 100-199/1000', 'content-length': '100', 'content-type': 'video/mp4' });
      const suffix = await binary(request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=-10')).expect(206);
      expect((suffix.body as Buffer).equals(body.subarray(990))).toBe(true);
      expect(suffix.headers['content-range']).toBe('bytes 990-999/1000');
      const open = await binary(request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=995-')).expect(206);
      expect((open.body as Buffer).equals(body.subarray(995))).toBe(true);

      const beyond = await request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=1000-');
      expect(beyond.status).toBe(416);
      expect(beyond.headers['content-range']).toBe('bytes */1000');
      expect(beyond.body).toEqual({ error: { code: 'RANGE_NOT_SATISFIABLE', message: expect.any(String) } });

      // A stale If-Range gets the whole current file instead of a piece of it.
      const whole = await binary(request(t.http).get(pathOf(item.mediaUrl)).set('Range', 'bytes=0-9').set('If-Range', '"old"')).expect(200);
      expect((whole.body as Buffer).length).toBe(1000);
    });

    it('answers 404 for pending, deleted, unknown and malformed files, and across organizations', async () => {
      const org = await createOrganization(t);
      const other = await createOrganization(t);
      const pending = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
      expectNotFound(await request(t.http).get(pathOf(pending.mediaUrl!)));
      expectNotFound(await request(t.http).get(`/c/${org.id}/${randomUUID()}`));
      expectNotFound(await request(t.http).get(`/c/${org.id}/not-a-uuid`));
      expectNotFound(await request(t.http).get(`/c/nope/${randomUUID()}`));
      const item = await uploadFile(t, org, bytes(10));
      expectNotFound(await request(t.http).get(`/c/${other.id}/${item.id}`));
      await request(t.http).get(pathOf(item.mediaUrl)).expect(200);
      await request(t.http).delete(`/v1/storage/${item.id}`).set(bearer(org.key)).expect(200);
      expectNotFound(await request(t.http).get(pathOf(item.mediaUrl)));
      expect((await request(t.http).head(pathOf(item.mediaUrl))).status).toBe(404);
    });
  });

  describe('sweeper', () => {
    it('removes expired unused pending items, expired nonces, orphan objects and temp files; keeps the rest', async () => {
      const org = await createOrganization(t);
      const sweeper = t.app.get(StorageSweeper);
      const kept = await uploadFile(t, org, bytes(20));
      const expired = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
      const nonAllocated = await signedUrl(t, org);
      await post(t, nonAllocated.url, bytes(5)).expect(201);
      // A crash between an upload's store commit and its row, or between a row delete and its object delete:
      const orphanKey = objectKeyFor(org.id, randomUUID());
      await t.store.put(orphanKey, Readable.from([Buffer.from('orphan')]), 6);
      // A claimed pending item: an upload is streaming into it, so it is not "unused".
      const inFlight = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
      await t.db.query('UPDATE storage_items SET upload_claimed_at = clock_timestamp() WHERE id = $1', [inFlight.mediaId]);
      // A temp file of an upload whose process died, where this driver keeps them.
      const tempDir = driver === 's3' ? join(t.config.dataDir, 'upload-spool') : join(t.config.dataDir, 'objects', '.tmp');
      const tempFile = join(tempDir, 'dead-upload');
      await mkdir(tempDir, { recursive: true });
      await writeFile(tempFile, 'half a file');
      await utimes(tempFile, new Date(Date.now() - 30 * 60_000), new Date(Date.now() - 30 * 60_000));

      // Now: nothing has expired and the orphan is too young to be told from an upload about to commit.
      const now = await sweeper.sweep();
      expect(now).toMatchObject({ orphanObjects: 0, temporaryFiles: 0 });
      expect((await t.db.query('SELECT id FROM storage_items WHERE id = $1', [expired.mediaId])).rowCount).toBe(1);
      expect(await storedKeys(t)).toContain(orphanKey);
      expect(await temporaryFiles(t)).toEqual(['dead-upload']);

      // 16 minutes on: the URLs have expired.
      const later = await sweeper.sweep(new Date(Date.now() + 16 * 60_000));
      // The sweep covers every organization (other tests' pending items too), so check this one's rows.
      expect(later.expiredItems).toBeGreaterThanOrEqual(1);
      const ids = (await t.db.query('SELECT id FROM storage_items WHERE organization_id = $1', [org.id])).rows.map((row) => row.id);
      expect(ids).not.toContain(expired.mediaId);
      expect(ids).toEqual(expect.arrayContaining([kept.id, inFlight.mediaId]));
      // The spent nonce outlives its URL by the 5-minute clock-skew margin.
      expect((await t.db.query('SELECT * FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rows).toHaveLength(1);
      const pastMargin = await sweeper.sweep(new Date(Date.now() + 21 * 60_000));
      expect(pastMargin.expiredNonces).toBeGreaterThanOrEqual(1);
      expect((await t.db.query('SELECT * FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rows).toEqual([]);

      // Two hours on: the orphan is old enough to be collected; files with rows stay.
      const muchLater = await sweeper.sweep(new Date(Date.now() + 2 * 3600_000));
      expect(muchLater.orphanObjects).toBeGreaterThanOrEqual(1);
      expect(await storedKeys(t)).not.toContain(orphanKey);
      expect(await storedObject(t, org.id, kept.id)).toBe(true);
      await request(t.http).get(pathOf(kept.mediaUrl)).expect(200);
      expect(muchLater.temporaryFiles).toBe(1);
      expect(await temporaryFiles(t)).toEqual([]);
    });

    it('keeps a spent nonce until 5 minutes past its expiry, so an instance whose clock is behind cannot reopen the URL', async () => {
      // The sweeper runs on an injected clock; the app answering uploads keeps the real one, which is behind it.
      const org = await createOrganization(t);
      const sweeper = t.app.get(StorageSweeper);
      const signed = await signedUrl(t, org);
      await post(t, signed.url, bytes(5)).expect(201);
      const expiresAt = Date.parse(signed.expiresAt);
      const nonces = async () => (await t.db.query('SELECT nonce FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rowCount;

      // Expired by a second, then by 4 min 59 s, on the sweeper's clock: the nonce stays, so a replay to an
      // instance whose clock still reads the URL as valid is a 409, never a second upload.
      for (const late of [1_000, NONCE_CLOCK_SKEW_MS - 1_000]) {
        await sweeper.sweep(new Date(expiresAt + late));
        expect(await nonces()).toBe(1);
        const replay = await post(t, signed.url, bytes(5));
        expect(replay.status).toBe(409);
        expect(replay.body.error.code).toBe('CONFLICT');
      }
      expect((await t.db.query('SELECT 1 FROM storage_items WHERE organization_id = $1', [org.id])).rowCount).toBe(1);

      // Past the margin it goes.
      const report = await sweeper.sweep(new Date(expiresAt + NONCE_CLOCK_SKEW_MS + 1_000));
      expect(report.expiredNonces).toBeGreaterThanOrEqual(1);
      expect(await nonces()).toBe(0);
    });

    it('an upload to a swept URL answers 404', async () => {
      const org = await createOrganization(t);
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: 3 });
      await t.db.query("UPDATE storage_items SET upload_expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [signed.mediaId]);
      await t.app.get(StorageSweeper).sweep();
      const response = await put(t, signed.url, bytes(3), 'image/png');
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    });
  });
});
