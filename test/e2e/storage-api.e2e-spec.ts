import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { admin, bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { bytes, createStorageTestApp, DRIVERS, pathOf, signedUrl, storedObject, StorageTestApp, uploadFile } from '../factories/storage.factory';
import { expectStorageError } from '../support/expect-error';

const ZERO_BREAKDOWN = ['image', 'video', 'audio', 'document'].map((kind) => ({ kind, count: 0, size: 0 }));

describe.each(DRIVERS)('storage API (%s driver)', (driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp(driver);
  });
  afterAll(() => t.close());

  const api = (org: TestOrganization) => ({
    get: (path: string) => request(t.http).get(`/v1/storage${path}`).set(bearer(org.key)),
    delete: (path: string) => request(t.http).delete(`/v1/storage${path}`).set(bearer(org.key)),
  });
  const rows = async (organizationId: string) =>
    (await t.db.query('SELECT * FROM storage_items WHERE organization_id = $1 ORDER BY created_at', [organizationId])).rows;

  describe('GET /v1/storage/signed-url', () => {
    it('without parameters gives a non-allocated URL on the upload host and reserves nothing', async () => {
      const org = await createOrganization(t);
      const before = Date.now();
      const response = await api(org).get('/signed-url').expect(200);
      const after = Date.now();
      expect(response.body).toEqual({ url: expect.any(String), expiresAt: expect.any(String) });
      expect(response.body.url.startsWith(`${t.config.urls.uploadUrl}/${org.id}?`)).toBe(true);
      // 15 minutes from when the service signed it, which is somewhere between `before` and `after`.
      const expiresAt = Date.parse(response.body.expiresAt);
      expect(expiresAt).toBeGreaterThan(before + 14 * 60_000);
      expect(expiresAt).toBeLessThanOrEqual(after + 15 * 60_000);
      expect(await rows(org.id)).toEqual([]);
    });

    it('with contentType and size pre-allocates a pending item and returns its id and CDN address', async () => {
      const org = await createOrganization(t);
      const metadata = { level: 3, author: 'mira', public: true };
      const response = await api(org)
        .get('/signed-url')
        .query({ contentType: 'image/png', size: 2048, metadata: JSON.stringify(metadata) })
        .expect(200);
      expect(response.body).toEqual({
        url: expect.stringMatching(new RegExp(`^${t.config.urls.uploadUrl}/${org.id}/${response.body.mediaId}\\?`)),
        expiresAt: expect.any(String),
        mediaId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        mediaUrl: `${t.config.urls.cdnUrl}/c/${org.id}/${response.body.mediaId}`,
      });
      const [row] = await rows(org.id);
      expect(row).toMatchObject({
        id: response.body.mediaId,
        kind: 'image',
        size: '2048',
        content_type: 'image/png',
        state: 'pending',
        metadata,
        completed_at: null,
      });
      expect(row.upload_expires_at.toISOString()).toBe(response.body.expiresAt);
    });

    it('accepts quoted parameter values of visible ASCII, and the upload sends the same type', async () => {
      const org = await createOrganization(t);
      const contentType = 'text/plain; charset="utf-8"; name="a;b"';
      const response = await api(org).get('/signed-url').query({ contentType, size: 2 }).expect(200);
      expect((await rows(org.id))[0].content_type).toBe('text/plain;charset="utf-8";name="a;b"');
      await request(t.http).put(pathOf(response.body.url)).set('Content-Type', contentType).send(Buffer.from('hi')).expect(200);
    });

    it('derives the kind from the content type', async () => {
      const org = await createOrganization(t);
      for (const contentType of ['video/mp4', 'audio/ogg', 'application/pdf', 'image/webp']) {
        await api(org).get('/signed-url').query({ contentType, size: 1 }).expect(200);
      }
      expect((await rows(org.id)).map((row) => row.kind)).toEqual(['video', 'audio', 'document', 'image']);
    });

    it.each([
      [/contentType and size must be given together/, { contentType: 'image/png' }],
      [/contentType and size must be given together/, { size: 10 }],
      [/size/, { contentType: 'image/png', size: -1 }],
      [/size/, { contentType: 'image/png', size: '1.5' }],
      [/size/, { contentType: 'image/png', size: 'abc' }],
      [/contentType must be a MIME type/, { contentType: 'png', size: 1 }],
      // Quoted parameter values take visible ASCII only: no control characters, no DEL, nothing beyond ASCII.
      [/^contentType must be a MIME type/, { contentType: 'text/plain; charset="utf\u00018"', size: 1 }],
      [/^contentType must be a MIME type/, { contentType: 'text/plain; charset="utf\u001b[2J"', size: 1 }],
      [/^contentType must be a MIME type/, { contentType: 'text/plain; charset="a\tb"', size: 1 }],
      [/^contentType must be a MIME type/, { contentType: 'text/plain; charset="utf\u007f8"', size: 1 }],
      [/^contentType must be a MIME type/, { contentType: 'text/plain; name="caf\u00e9"', size: 1 }],
      [/metadata requires contentType and size/, { metadata: '{"a":1}' }],
      [/metadata must be a JSON-encoded object/, { contentType: 'image/png', size: 1, metadata: 'not json' }],
      [
        /at most 10 keys/,
        { contentType: 'image/png', size: 1, metadata: JSON.stringify(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i]))) },
      ],
      [/key names may only contain/, { contentType: 'image/png', size: 1, metadata: '{"bad key":1}' }],
      [/at most 512 characters/, { contentType: 'image/png', size: 1, metadata: JSON.stringify({ k: 'x'.repeat(513) }) }],
      [/string, number or boolean/, { contentType: 'image/png', size: 1, metadata: '{"k":{"nested":true}}' }],
      [
        /2048 bytes/,
        {
          contentType: 'image/png',
          size: 1,
          metadata: JSON.stringify(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'y'.repeat(500)]))),
        },
      ],
      [/^Unknown query parameter "extra": this operation takes only contentType, size, metadata, fileName$/, { extra: 'x' }],
    ])('answers 400 VALIDATION_ERROR with a message matching %s', async (message, query) => {
      const org = await createOrganization(t);
      expectStorageError(await api(org).get('/signed-url').query(query), 400, 'VALIDATION_ERROR', message);
      expect(await rows(org.id)).toEqual([]);
    });

    it('answers 413 PAYLOAD_TOO_LARGE for a size above MAX_UPLOAD_BYTES', async () => {
      const org = await createOrganization(t);
      const tooBig = t.config.storage.maxUploadBytes + 1;
      expectStorageError(
        await api(org).get('/signed-url').query({ contentType: 'video/mp4', size: tooBig }),
        413,
        'PAYLOAD_TOO_LARGE',
        /MAX_UPLOAD_BYTES/,
      );
      await api(org)
        .get('/signed-url')
        .query({ contentType: 'video/mp4', size: tooBig - 1 })
        .expect(200);
    });
  });

  describe('authentication and permissions (storage error shape)', () => {
    it('answers 401 UNAUTHORIZED without a key or with an unknown one', async () => {
      for (const path of ['/signed-url', '/items', '']) {
        expectStorageError(await request(t.http).get(`/v1/storage${path}`), 401, 'UNAUTHORIZED');
      }
      expectStorageError(await request(t.http).delete('/v1/storage/purge').set(bearer('fsk_unknown_key_0000000000000000')), 401, 'UNAUTHORIZED');
      expectStorageError(await request(t.http).delete(`/v1/storage/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`), 401, 'UNAUTHORIZED');
    });

    it('answers 403 FORBIDDEN when the key lacks the permission', async () => {
      const org = await createOrganization(t);
      const readOnly = await createApiKey(t, org.id, [Permission.STORAGE_READ, Permission.FLAGS_WRITE]);
      const writeOnly = await createApiKey(t, org.id, [Permission.STORAGE_WRITE]);
      const as =
        (key: string) =>
        (path: string, method: 'get' | 'delete' = 'get') =>
          request(t.http)[method](`/v1/storage${path}`).set(bearer(key));
      expectStorageError(await as(readOnly.key)('/signed-url'), 403, 'FORBIDDEN', /STORAGE_WRITE/);
      expectStorageError(await as(readOnly.key)('/purge', 'delete'), 403, 'FORBIDDEN', /STORAGE_WRITE/);
      expectStorageError(await as(readOnly.key)(`/${org.id}`, 'delete'), 403, 'FORBIDDEN', /STORAGE_WRITE/);
      expectStorageError(await as(writeOnly.key)('/items'), 403, 'FORBIDDEN', /STORAGE_READ/);
      expectStorageError(await as(writeOnly.key)(''), 403, 'FORBIDDEN', /STORAGE_READ/);
      await as(readOnly.key)('/items').expect(200);
      await as(writeOnly.key)('/signed-url').expect(200);
    });
  });

  describe('GET /v1/storage/items', () => {
    it('pages through every item, newest first, pending ones included', async () => {
      const org = await createOrganization(t);
      expect((await api(org).get('/items').expect(200)).body).toEqual({ items: [], total: 0, page: 1, limit: 10, totalPages: 0 });

      const complete = await uploadFile(t, org, bytes(100), 'image/png', { a: 1 });
      const ids = [complete.id];
      for (let i = 0; i < 11; i += 1) {
        ids.push((await signedUrl(t, org, { contentType: i % 2 ? 'video/mp4' : 'audio/mpeg', size: i })).mediaId!);
      }
      const newestFirst = [...ids].reverse();
      const first = await api(org).get('/items').expect(200);
      expect(first.body).toMatchObject({ total: 12, page: 1, limit: 10, totalPages: 2 });
      expect(first.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(0, 10));
      const second = await api(org).get('/items').query({ page: 2 }).expect(200);
      expect(second.body.items.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(10));
      expect(second.body.items[1]).toEqual({
        id: complete.id,
        kind: 'image',
        size: 100,
        state: 'complete',
        metadata: { a: 1 },
        createdAt: complete.createdAt,
      });
      expect(second.body.items[0]).toMatchObject({ state: 'pending', kind: 'audio', size: 0, metadata: null });
      const beyond = await api(org).get('/items').query({ page: 5, limit: 100 }).expect(200);
      expect(beyond.body).toEqual({ items: [], total: 12, page: 5, limit: 100, totalPages: 1 });

      const videos = await api(org).get('/items').query({ kind: 'video', limit: 3 }).expect(200);
      expect(videos.body).toMatchObject({ total: 5, page: 1, limit: 3, totalPages: 2 });
      expect(videos.body.items.every((item: { kind: string }) => item.kind === 'video')).toBe(true);
    });

    it.each([
      [{ limit: 0 }, /limit/],
      [{ limit: 101 }, /limit/],
      [{ limit: 'ten' }, /limit/],
      [{ page: 0 }, /page/],
      [{ page: '' }, /page/],
      [{ kind: 'pdf' }, /kind must be one of image, video, audio, document/],
      [{ sort: 'size' }, /^Unknown query parameter "sort": this operation takes only page, limit, kind$/],
    ])('answers 400 VALIDATION_ERROR for %j', async (query, message) => {
      const org = await createOrganization(t);
      expectStorageError(await api(org).get('/items').query(query), 400, 'VALIDATION_ERROR', message);
    });
  });

  describe('GET /v1/storage', () => {
    it('counts complete files only, per kind, against the allocation', async () => {
      const org = await createOrganization(t);
      expect((await api(org).get('').expect(200)).body).toEqual({
        totalStorage: 1024 ** 3,
        usedStorage: 0,
        overageStorage: 0,
        breakdown: ZERO_BREAKDOWN,
      });
      await uploadFile(t, org, bytes(300), 'image/png');
      await uploadFile(t, org, bytes(200), 'image/jpeg');
      await uploadFile(t, org, bytes(500), 'application/pdf');
      await signedUrl(t, org, { contentType: 'video/mp4', size: 10_000 }); // pending: not counted
      const stats = await api(org).get('').expect(200);
      expect(stats.body).toEqual({
        totalStorage: 1024 ** 3,
        usedStorage: 1000,
        overageStorage: 0,
        breakdown: [
          { kind: 'image', count: 2, size: 500 },
          { kind: 'video', count: 0, size: 0 },
          { kind: 'audio', count: 0, size: 0 },
          { kind: 'document', count: 1, size: 500 },
        ],
      });
      await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: 600 }).expect(200);
      expect((await api(org).get('').expect(200)).body).toMatchObject({ totalStorage: 600, usedStorage: 1000, overageStorage: 400 });
    });
  });

  describe('DELETE /v1/storage/{fileId}', () => {
    it('removes the row and the bytes, and the CDN URL answers 404 at once', async () => {
      const org = await createOrganization(t);
      const item = await uploadFile(t, org, bytes(64));
      expect(await storedObject(t, org.id, item.id)).toBe(true);
      const response = await api(org).delete(`/${item.id}`).expect(200);
      expect(response.body).toEqual({ message: expect.stringContaining(item.id) });
      expect(await rows(org.id)).toEqual([]);
      expect(await storedObject(t, org.id, item.id)).toBe(false);
      expectStorageError(await request(t.http).get(new URL(item.mediaUrl).pathname), 404, 'NOT_FOUND');
      expectStorageError(await api(org).delete(`/${item.id}`), 404, 'NOT_FOUND', new RegExp(item.id));
    });

    it('deletes a pending item, whose URL then answers 404', async () => {
      const org = await createOrganization(t);
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: 3 });
      await api(org).delete(`/${signed.mediaId}`).expect(200);
      expect(await rows(org.id)).toEqual([]);
      const upload = await request(t.http)
        .put(new URL(signed.url).pathname + new URL(signed.url).search)
        .set('Content-Type', 'image/png')
        .send(Buffer.from('abc'));
      expectStorageError(upload, 404, 'NOT_FOUND');
    });

    it('answers 400 INVALID_UUID for a malformed id and 404 NOT_FOUND for an unknown one', async () => {
      const org = await createOrganization(t);
      expectStorageError(await api(org).delete('/not-a-uuid'), 400, 'INVALID_UUID', /fileId/);
      expectStorageError(await api(org).delete('/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    });
  });

  describe('DELETE /v1/storage/purge', () => {
    async function seed(org: TestOrganization) {
      const old = await uploadFile(t, org, bytes(10), 'image/png');
      const mid = await uploadFile(t, org, bytes(20), 'video/mp4');
      const recent = await uploadFile(t, org, bytes(30), 'image/gif');
      const pending = (await signedUrl(t, org, { contentType: 'image/png', size: 5 })).mediaId!;
      const at = async (id: string, iso: string) => t.db.query('UPDATE storage_items SET created_at = $2 WHERE id = $1', [id, iso]);
      await at(old.id, '2024-01-01T00:00:00Z');
      await at(mid.id, '2024-06-01T00:00:00Z');
      await at(recent.id, '2025-01-01T00:00:00Z');
      await at(pending, '2025-06-01T00:00:00Z');
      return { old: old.id, mid: mid.id, recent: recent.id, pending };
    }
    const ids = async (orgId: string) => (await rows(orgId)).map((row) => row.id).sort();

    it('combines kind, before and after; dryRun counts without deleting', async () => {
      const org = await createOrganization(t);
      const s = await seed(org);
      const all = [s.old, s.mid, s.recent, s.pending].sort();

      const dry = await api(org).delete('/purge').send({ kind: 'image', before: '2025-03-01T00:00:00Z', dryRun: true }).expect(200);
      // A dry run says so twice (decisions, turn 5): its purgedCount counts what would go, and nothing went.
      expect(dry.body).toEqual({
        message: 'Dry run (dryRun: true): 2 item(s) would be purged; nothing was deleted',
        purgedCount: 2,
        dryRun: true,
      });
      expect(await ids(org.id)).toEqual(all);
      expect(await storedObject(t, org.id, s.old)).toBe(true);

      const windowed = await api(org).delete('/purge').send({ after: '2024-03-01T00:00:00Z', before: '2024-12-31T00:00:00Z' }).expect(200);
      expect(windowed.body).toEqual({ message: 'Purged 1 item(s)', purgedCount: 1, dryRun: false });
      expect(await ids(org.id)).toEqual([s.old, s.recent, s.pending].sort());
      expect(await storedObject(t, org.id, s.mid)).toBe(false);

      const images = await api(org).delete('/purge').send({ kind: 'image', before: '2025-03-01' }).expect(200);
      expect(images.body.purgedCount).toBe(2);
      expect(await ids(org.id)).toEqual([s.pending]);
      expect(await storedObject(t, org.id, s.old)).toBe(false);
      expect(await storedObject(t, org.id, s.recent)).toBe(false);
    });

    it('purges everything with an empty body, and nothing is left in the store', async () => {
      const org = await createOrganization(t);
      const s = await seed(org);
      const response = await api(org).delete('/purge').expect(200);
      expect(response.body).toEqual({ message: 'Purged 4 item(s)', purgedCount: 4, dryRun: false });
      expect(await rows(org.id)).toEqual([]);
      for (const id of [s.old, s.mid, s.recent]) expect(await storedObject(t, org.id, id)).toBe(false);
      expect((await api(org).delete('/purge').send({}).expect(200)).body.purgedCount).toBe(0);
    });

    it.each([
      [{ kind: 'pdf' }, /kind must be one of/],
      [{ before: 'yesterday' }, /before must be an ISO 8601 date/],
      [{ after: 12 }, /after must be an ISO 8601 date/],
      // Strict ISO 8601, but not something new Date() can read: these were 500s.
      [{ before: '2024-W01-1' }, /^before must be an ISO 8601 date or date-time such as 2026-01-31T00:00:00Z$/],
      [{ before: '2024-366' }, /^before must be an ISO 8601 date or date-time/],
      [{ before: '20240101' }, /^before must be an ISO 8601 date or date-time/],
      [{ after: '2024-W01-1' }, /^after must be an ISO 8601 date or date-time such as 2026-01-31T00:00:00Z$/],
      [{ after: '2024-366' }, /^after must be an ISO 8601 date or date-time/],
      [{ after: '20240101', kind: 'image' }, /^after must be an ISO 8601 date or date-time/],
      [{ before: '2024-01-01T10.5Z', dryRun: true }, /^before must be an ISO 8601 date or date-time/],
      [{ dryRun: 'yes' }, /dryRun/],
      [{ everything: true }, /everything should not exist/],
    ])('answers 400 VALIDATION_ERROR for %j and deletes nothing', async (body, message) => {
      const org = await createOrganization(t);
      await uploadFile(t, org, bytes(5));
      expectStorageError(await api(org).delete('/purge').send(body), 400, 'VALIDATION_ERROR', message);
      expect(await rows(org.id)).toHaveLength(1);
    });
  });

  describe('tenant isolation', () => {
    it("org A cannot list, count, delete or purge org B's files", async () => {
      const a = await createOrganization(t, 'A');
      const b = await createOrganization(t, 'B');
      const bFile = await uploadFile(t, b, bytes(42), 'image/png');
      const aFile = await uploadFile(t, a, bytes(7), 'image/png');

      const list = await api(a).get('/items').expect(200);
      expect(list.body.items.map((item: { id: string }) => item.id)).toEqual([aFile.id]);
      expect((await api(a).get('').expect(200)).body.usedStorage).toBe(7);
      expectStorageError(await api(a).delete(`/${bFile.id}`), 404, 'NOT_FOUND');
      expect((await api(a).delete('/purge').send({}).expect(200)).body.purgedCount).toBe(1);

      expect((await rows(b.id)).map((row) => row.id)).toEqual([bFile.id]);
      expect(await storedObject(t, b.id, bFile.id)).toBe(true);
      // B's file is not reachable through A's CDN path either.
      expectStorageError(await request(t.http).get(`/c/${a.id}/${bFile.id}`), 404, 'NOT_FOUND');
      await request(t.http).get(new URL(bFile.mediaUrl).pathname).expect(200);
    });
  });

  it('documents every storage route with the error shape in OpenAPI', async () => {
    const document = (await request(t.http).get('/docs-json').expect(200)).body;
    for (const [path, method] of [
      ['/v1/storage/signed-url', 'get'],
      ['/v1/storage/items', 'get'],
      ['/v1/storage', 'get'],
      ['/v1/storage/purge', 'delete'],
      ['/v1/storage/{fileId}', 'delete'],
      ['/upload/{organizationId}/{mediaId}', 'put'],
      ['/upload/{organizationId}', 'post'],
      ['/c/{organizationId}/{mediaId}', 'get'],
    ]) {
      const operation = document.paths[path]?.[method];
      expect(operation).toBeDefined();
      const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400);
      expect(errors.length).toBeGreaterThan(0);
      for (const [, response] of errors) {
        expect(JSON.stringify(response)).toContain('#/components/schemas/StorageErrorDto');
      }
    }
    expect(document.components.schemas.StorageErrorDto).toBeDefined();
    expect(document.components.schemas.StorageItemDto.required).toEqual(
      expect.arrayContaining(['id', 'kind', 'size', 'state', 'metadata', 'createdAt']),
    );
  });
});
