import { createHash } from 'node:crypto';
import request from 'supertest';
import { SignedUrls } from '../../src/storage/signed-urls/signed-urls';
import { bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import {
  bytes,
  createStorageTestApp,
  DRIVERS,
  pathOf,
  post,
  put,
  rawPut,
  rawRequest,
  readStoredObject,
  signedUrl,
  storedKeys,
  storedObject,
  StorageTestApp,
  temporaryFiles,
} from '../factories/storage.factory';
import { eventually } from '../support/eventually';
import { expectStorageError } from '../support/expect-error';

const sha256 = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');

describe.each(DRIVERS)('upload host (%s driver)', (driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp(driver);
  });
  afterAll(() => t.close());

  const row = async (id: string) => (await t.db.query('SELECT * FROM storage_items WHERE id = $1', [id])).rows[0];
  const orgKeys = async (org: TestOrganization) => (await storedKeys(t)).filter((key) => key.startsWith(`${org.id}/`));
  const tempFiles = () => temporaryFiles(t);
  const preallocate = (org: TestOrganization, size: number, contentType = 'image/png') => signedUrl(t, org, { contentType, size });

  describe('pre-allocated PUT', () => {
    it('stores the bytes and completes the item, with no bearer header', async () => {
      const org = await createOrganization(t);
      const body = bytes(4096);
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: body.length, metadata: '{"level":2}' });
      const response = await put(t, signed.url, body, 'image/png');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        id: signed.mediaId,
        kind: 'image',
        size: 4096,
        state: 'complete',
        metadata: { level: 2 },
        createdAt: expect.any(String),
        mediaUrl: signed.mediaUrl,
      });
      expect(await row(signed.mediaId!)).toMatchObject({ state: 'complete', checksum: sha256(body), upload_claimed_at: expect.any(Date) });
      expect((await row(signed.mediaId!)).completed_at).toBeInstanceOf(Date);
      expect((await readStoredObject(t, org.id, signed.mediaId!))!.equals(body)).toBe(true);
      expect(await tempFiles()).toEqual([]);
    });

    it('stores a 0-byte file', async () => {
      const org = await createOrganization(t);
      const signed = await preallocate(org, 0, 'text/plain');
      const response = await put(t, signed.url, Buffer.alloc(0), 'text/plain').expect(200);
      expect(response.body).toMatchObject({ size: 0, state: 'complete', kind: 'document' });
      expect((await readStoredObject(t, org.id, signed.mediaId!))!.length).toBe(0);
      const download = await request(t.http).get(pathOf(signed.mediaUrl!)).expect(200);
      expect(download.headers['content-length']).toBe('0');
      expect(download.headers['content-type']).toBe('text/plain');
    });

    it('stores a 50 MB file intact', async () => {
      const org = await createOrganization(t);
      const body = bytes(50 * 1024 * 1024);
      const signed = await preallocate(org, body.length, 'video/mp4');
      const response = await put(t, signed.url, body, 'video/mp4').expect(200);
      expect(response.body).toMatchObject({ size: body.length, kind: 'video', state: 'complete' });
      expect((await row(signed.mediaId!)).checksum).toBe(sha256(body));
      const stored = await readStoredObject(t, org.id, signed.mediaId!);
      expect(stored!.length).toBe(body.length);
      expect(sha256(stored!)).toBe(sha256(body));
    }, 120_000);

    it('answers 400 for a wrong Content-Type or byte count, stores nothing, and the URL still works after', async () => {
      const org = await createOrganization(t);
      const body = bytes(100);
      const signed = await preallocate(org, 100, 'image/png');
      expectStorageError(await put(t, signed.url, body, 'image/jpeg'), 400, 'VALIDATION_ERROR', /Content-Type must be image\/png/);
      expectStorageError(await request(t.http).put(pathOf(signed.url)).send(body), 400, 'VALIDATION_ERROR', /Content-Type/);
      expectStorageError(await put(t, signed.url, body.subarray(0, 99), 'image/png'), 400, 'VALIDATION_ERROR', /99 bytes/);
      // Chunked, so that only the bytes themselves show the shortfall.
      const short = rawPut(t, signed.url, 'image/png', null);
      await short.write(body.subarray(0, 50));
      expectStorageError(await short.finish(), 400, 'VALIDATION_ERROR', /50 bytes/);
      expect(await row(signed.mediaId!)).toMatchObject({ state: 'pending', upload_claimed_at: null, checksum: null });
      expect(await storedObject(t, org.id, signed.mediaId!)).toBe(false);
      await put(t, signed.url, body, 'image/png').expect(200);
    });

    it('answers 413 once the body passes the signed size, declared or streamed, and stores nothing', async () => {
      const org = await createOrganization(t);
      const signed = await preallocate(org, 1000);
      expectStorageError(await put(t, signed.url, bytes(1001), 'image/png'), 413, 'PAYLOAD_TOO_LARGE', /1000 bytes/);
      const chunked = rawPut(t, signed.url, 'image/png', null);
      await chunked.write(bytes(800));
      await chunked.write(bytes(800));
      expectStorageError(await chunked.finish(), 413, 'PAYLOAD_TOO_LARGE');
      expect(await row(signed.mediaId!)).toMatchObject({ state: 'pending', upload_claimed_at: null });
      expect(await orgKeys(org)).toEqual([]);
      expect(await tempFiles()).toEqual([]);
    });

    it('answers 409 to a second upload to the same URL', async () => {
      const org = await createOrganization(t);
      const first = bytes(10);
      const signed = await preallocate(org, 10);
      await put(t, signed.url, first, 'image/png').expect(200);
      expectStorageError(await put(t, signed.url, bytes(10), 'image/png'), 409, 'CONFLICT', /already been used/);
      expect((await readStoredObject(t, org.id, signed.mediaId!))!.equals(first)).toBe(true);
    });

    it('lets exactly one of two concurrent uploads to one URL succeed', async () => {
      const org = await createOrganization(t);
      const body = bytes(200_000);
      const signed = await preallocate(org, body.length);
      const first = rawPut(t, signed.url, 'image/png', body.length);
      await first.write(body.subarray(0, 100_000));
      await eventually(async () => (await row(signed.mediaId!)).upload_claimed_at !== null, { timeoutMs: 10_000 });
      expectStorageError(await put(t, signed.url, body, 'image/png'), 409, 'CONFLICT');
      await first.write(body.subarray(100_000));
      expect((await first.finish()).status).toBe(200);
      // And with both sent at once, whichever claims first wins.
      const other = await preallocate(org, body.length);
      const results = await Promise.all([put(t, other.url, body, 'image/png'), put(t, other.url, body, 'image/png')]);
      expect(results.map((result) => result.status).sort()).toEqual([200, 409]);
    });

    it('answers 403 to an expired or tampered URL', async () => {
      const org = await createOrganization(t);
      const signed = await preallocate(org, 3);
      const expired = t.app.get(SignedUrls).preallocatedUrl({
        organizationId: org.id,
        mediaId: signed.mediaId!,
        size: 3,
        contentType: 'image/png',
        expiresAt: Math.floor(Date.now() / 1000) - 1,
      });
      expectStorageError(await put(t, expired, bytes(3), 'image/png'), 403, 'FORBIDDEN', /expired/);

      const url = new URL(signed.url);
      const tamper = (change: (u: URL) => void) => {
        const copy = new URL(url);
        change(copy);
        return copy.toString();
      };
      const other = await createOrganization(t);
      for (const tampered of [
        tamper((u) => u.searchParams.set('size', '4')),
        tamper((u) => u.searchParams.set('contentType', 'image/gif')),
        tamper((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))),
        tamper((u) => u.searchParams.set('signature', 'A'.repeat(43))),
        tamper((u) => u.searchParams.delete('signature')),
        tamper((u) => (u.pathname = u.pathname.replace(org.id, other.id))),
        tamper((u) => (u.pathname = `${u.pathname.slice(0, -1)}${u.pathname.endsWith('0') ? '1' : '0'}`)),
      ]) {
        expectStorageError(
          await put(t, tampered, bytes(tampered.includes('size=4') ? 4 : 3), tampered.includes('gif') ? 'image/gif' : 'image/png'),
          403,
          'FORBIDDEN',
        );
      }
      expect(await row(signed.mediaId!)).toMatchObject({ state: 'pending', upload_claimed_at: null });
      await put(t, signed.url, bytes(3), 'image/png').expect(200);
    });

    it('leaves no object and a retryable URL when the client goes away mid-upload', async () => {
      const org = await createOrganization(t);
      const body = bytes(1_000_000);
      const signed = await preallocate(org, body.length);
      const upload = rawPut(t, signed.url, 'image/png', body.length);
      await upload.write(body.subarray(0, 400_000));
      await eventually(async () => (await row(signed.mediaId!)).upload_claimed_at !== null, { timeoutMs: 10_000 });
      upload.abort();
      await eventually(async () => (await row(signed.mediaId!)).upload_claimed_at === null, { timeoutMs: 10_000 });
      expect(await row(signed.mediaId!)).toMatchObject({ state: 'pending', checksum: null });
      expect(await orgKeys(org)).toEqual([]);
      await eventually(async () => (await tempFiles()).length === 0, { timeoutMs: 10_000 });
      await request(t.http).get(pathOf(signed.mediaUrl!)).expect(404);
      await put(t, signed.url, body, 'image/png').expect(200);
    });

    it('a purge racing an upload leaves neither row nor bytes', async () => {
      const org = await createOrganization(t);
      const body = bytes(500_000);
      const signed = await preallocate(org, body.length);
      const upload = rawPut(t, signed.url, 'image/png', body.length);
      await upload.write(body.subarray(0, 250_000));
      await eventually(async () => (await row(signed.mediaId!)).upload_claimed_at !== null, { timeoutMs: 10_000 });
      const purge = await request(t.http).delete('/v1/storage/purge').set(bearer(org.key)).send({}).expect(200);
      expect(purge.body.purgedCount).toBe(1);
      await upload.write(body.subarray(250_000));
      expectStorageError(await upload.finish(), 404, 'NOT_FOUND', /deleted or purged/);
      expect(await row(signed.mediaId!)).toBeUndefined();
      expect(await orgKeys(org)).toEqual([]);
      expect(await tempFiles()).toEqual([]);
      await request(t.http).get(pathOf(signed.mediaUrl!)).expect(404);
    });

    it('a purge sent together with an upload always purges the item, and the database and the store agree', async () => {
      // The pending row exists before either request starts, and the purge deletes pending and complete rows
      // alike, so its DELETE always takes the row: before completePending (the upload answers 404 and removes
      // the bytes it streamed) or after it (the upload answers 200 and the purge removes the bytes). No
      // interleaving lets the item outlive a purge that answered 200, so there is no third outcome.
      const org = await createOrganization(t);
      const body = bytes(200_000);
      for (const delayMs of [0, 0, 2, 5, 10, 20, 40]) {
        const signed = await preallocate(org, body.length);
        const [uploaded, purged] = await Promise.all([
          put(t, signed.url, body, 'image/png'),
          new Promise((resolve) => setTimeout(resolve, delayMs)).then(() =>
            request(t.http).delete('/v1/storage/purge').set(bearer(org.key)).send({}),
          ),
        ]);
        expect(purged.status).toBe(200);
        expect(purged.body.purgedCount).toBe(1);
        if (uploaded.status === 200) {
          expect(uploaded.body).toMatchObject({ id: signed.mediaId, state: 'complete', size: body.length });
        } else {
          expectStorageError(uploaded, 404, 'NOT_FOUND', /deleted or purged/);
        }
        // Whoever won: no row, no bytes, no temp file, and the CDN has nothing to serve.
        expect(await row(signed.mediaId!)).toBeUndefined();
        expect(await storedObject(t, org.id, signed.mediaId!)).toBe(false);
        expect(await orgKeys(org)).toEqual([]);
        expect(await tempFiles()).toEqual([]);
        await request(t.http).get(pathOf(signed.mediaUrl!)).expect(404);
      }
    });
  });

  describe('non-allocated multipart POST', () => {
    it('stores the file with its part type and metadata and answers 201', async () => {
      const org = await createOrganization(t);
      const body = bytes(3000);
      const signed = await signedUrl(t, org);
      const response = await post(t, signed.url, body, { contentType: 'audio/ogg', filename: 'a.ogg', metadata: '{"track":7}' });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        kind: 'audio',
        size: 3000,
        state: 'complete',
        metadata: { track: 7 },
        fileName: 'a.ogg',
        createdAt: expect.any(String),
        mediaUrl: `${t.config.urls.cdnUrl}/c/${org.id}/${response.body.id}`,
      });
      expect(await row(response.body.id)).toMatchObject({ content_type: 'audio/ogg', checksum: sha256(body), state: 'complete' });
      expect((await readStoredObject(t, org.id, response.body.id))!.equals(body)).toBe(true);
      expect(await tempFiles()).toEqual([]);
      expectStorageError(await post(t, signed.url, body), 409, 'CONFLICT');
    });

    it('stores a 0-byte file and a 50 MB file', async () => {
      const org = await createOrganization(t);
      const empty = await post(t, (await signedUrl(t, org)).url, Buffer.alloc(0), { filename: 'empty.txt', contentType: 'text/plain' }).expect(201);
      expect(empty.body).toMatchObject({ size: 0, kind: 'document', metadata: null });
      const big = bytes(50 * 1024 * 1024);
      const response = await post(t, (await signedUrl(t, org)).url, big, { filename: 'big.png', contentType: 'image/png' }).expect(201);
      expect(response.body).toMatchObject({ size: big.length, kind: 'image' });
      expect((await row(response.body.id)).checksum).toBe(sha256(big));
      expect(await tempFiles()).toEqual([]);
    }, 120_000);

    it.each([
      ['invalid metadata', (url: string) => post(t, url, bytes(10), { metadata: '{"bad key":1}' }), /key names may only contain/],
      ['metadata that is not JSON', (url: string) => post(t, url, bytes(10), { metadata: 'nope' }), /JSON-encoded object/],
      [
        'a metadata field over 64 KiB',
        (url: string) => post(t, url, bytes(10), { metadata: `{"a":"b"${' '.repeat(64 * 1024)}}` }),
        /^The metadata field must be at most 65536 bytes \(the metadata itself at most 2048 bytes as compact JSON\)$/,
      ],
      [
        'metadata over 2048 bytes as compact JSON',
        (url: string) =>
          post(t, url, bytes(10), {
            metadata: JSON.stringify({ a: 'x'.repeat(500), b: 'x'.repeat(500), c: 'x'.repeat(500), d: 'x'.repeat(500), e: 'x'.repeat(100) }),
          }),
        /metadata must be at most 2048 bytes in total/,
      ],
      ['no file part', (url: string) => request(t.http).post(pathOf(url)).field('metadata', '{}'), /file is required/],
      ['the file as a text field', (url: string) => request(t.http).post(pathOf(url)).field('file', 'abc'), /file part/],
      ['another field', (url: string) => post(t, url, bytes(10)).field('extra', 'x'), /Unexpected field "extra"/],
      ['two files', (url: string) => post(t, url, bytes(10)).attach('file', bytes(5), 'b.bin'), /Only one file/],
      [
        'a body that is not multipart',
        (url: string) => request(t.http).post(pathOf(url)).set('Content-Type', 'application/octet-stream').send(bytes(10)),
        /multipart\/form-data/,
      ],
    ])('answers 400 for %s, stores nothing, and the URL can be used again', async (_name, send, message) => {
      const org = await createOrganization(t);
      const signed = await signedUrl(t, org);
      expectStorageError(await send(signed.url), 400, 'VALIDATION_ERROR', message);
      expect((await t.db.query('SELECT * FROM storage_items WHERE organization_id = $1', [org.id])).rows).toEqual([]);
      expect(await orgKeys(org)).toEqual([]);
      expect((await t.db.query('SELECT * FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rows).toEqual([]);
      expect(await tempFiles()).toEqual([]);
      await post(t, signed.url, bytes(10)).expect(201);
    });

    it('measures the 2048-byte metadata rule on compact JSON, so a padded field over 2048 bytes is accepted', async () => {
      const org = await createOrganization(t);
      const padded = `{ "level": 2,${' '.repeat(3000)}"name": "caf\\u00e9" }`;
      expect(Buffer.byteLength(padded)).toBeGreaterThan(2048);
      const response = await post(t, (await signedUrl(t, org)).url, bytes(10), { metadata: padded }).expect(201);
      expect(response.body.metadata).toEqual({ level: 2, name: 'café' });
    });

    it('answers 403 to an expired or tampered URL', async () => {
      const org = await createOrganization(t);
      const expired = t.app.get(SignedUrls).nonAllocatedUrl({
        organizationId: org.id,
        nonce: '8f7c2a8e-5d7e-4b1e-9a43-4a0a6e3c1b11',
        expiresAt: Math.floor(Date.now() / 1000) - 1,
      });
      expectStorageError(await post(t, expired, bytes(5)), 403, 'FORBIDDEN', /expired/);
      const url = new URL((await signedUrl(t, org)).url);
      url.searchParams.set('nonce', '8f7c2a8e-5d7e-4b1e-9a43-4a0a6e3c1b11');
      expectStorageError(await post(t, url.toString(), bytes(5)), 403, 'FORBIDDEN', /signature/);
    });

    it('lets exactly one of two concurrent uploads to one URL succeed', async () => {
      const org = await createOrganization(t);
      const signed = await signedUrl(t, org);
      const results = await Promise.all([post(t, signed.url, bytes(100_000)), post(t, signed.url, bytes(100_000))]);
      expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
      expect((await t.db.query('SELECT id FROM storage_items WHERE organization_id = $1', [org.id])).rows).toHaveLength(1);
      expect(await orgKeys(org)).toHaveLength(1);
      expect(await tempFiles()).toEqual([]);
    });

    it('leaves nothing behind when the client goes away mid-upload', async () => {
      const org = await createOrganization(t);
      const signed = await signedUrl(t, org);
      const boundary = 'flagstore-test-boundary';
      const upload = rawRequest(t, 'POST', signed.url, { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
      await upload.write(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: image/png\r\n\r\n`),
      );
      await upload.write(bytes(300_000));
      await eventually(async () => (await t.db.query('SELECT 1 FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rowCount === 1, {
        timeoutMs: 10_000,
      });
      upload.abort();
      await eventually(async () => (await t.db.query('SELECT 1 FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rowCount === 0, {
        timeoutMs: 10_000,
      });
      expect((await t.db.query('SELECT * FROM storage_items WHERE organization_id = $1', [org.id])).rows).toEqual([]);
      expect(await orgKeys(org)).toEqual([]);
      await eventually(async () => (await tempFiles()).length === 0, { timeoutMs: 10_000 });
    });
  });

  describe('with MAX_UPLOAD_BYTES=1000', () => {
    let small: StorageTestApp;
    beforeAll(async () => {
      small = await createStorageTestApp(driver, { MAX_UPLOAD_BYTES: '1000' });
    });
    afterAll(() => small.close());

    it('answers 413 to a multipart file above the limit and stores nothing', async () => {
      const org = await createOrganization(small);
      const signed = await signedUrl(small, org);
      expectStorageError(await post(small, signed.url, bytes(1001)), 413, 'PAYLOAD_TOO_LARGE', /MAX_UPLOAD_BYTES/);
      expect((await small.db.query('SELECT * FROM storage_items WHERE organization_id = $1', [org.id])).rows).toEqual([]);
      expect(await storedKeys(small)).toEqual([]);
      expect(await temporaryFiles(small)).toEqual([]);
      const ok = await post(small, signed.url, bytes(1000)).expect(201);
      expect(ok.body.size).toBe(1000);
    });
  });
});
