import request from 'supertest';
import { admin, bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import {
  bytes,
  createStorageTestApp,
  DRIVERS,
  post,
  put,
  rawRequest,
  signedUrl,
  storedKeys,
  StorageTestApp,
  temporaryFiles,
  uploadFile,
} from '../factories/storage.factory';
import { eventually } from '../support/eventually';
import { expectStorageError } from '../support/expect-error';

/** STORAGE_ENFORCE_ALLOCATION=true: the allocation is a hard limit on complete plus pending (unexpired) bytes. */
describe.each(DRIVERS)('storage allocation enforcement (%s driver)', (driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp(driver, { STORAGE_ENFORCE_ALLOCATION: 'true' });
  });
  afterAll(() => t.close());

  const setAllocation = (org: TestOrganization, storageAllocation: number) =>
    admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation }).expect(200);
  const requestUrl = (org: TestOrganization, size: number, contentType = 'image/png') =>
    request(t.http).get('/v1/storage/signed-url').query({ contentType, size }).set(bearer(org.key));
  const rows = async (org: TestOrganization) =>
    (await t.db.query('SELECT id, state, size::int AS size FROM storage_items WHERE organization_id = $1', [org.id])).rows as Array<{
      id: string;
      state: string;
      size: number;
    }>;
  const orgKeys = async (org: TestOrganization) => (await storedKeys(t)).filter((key) => key.startsWith(`${org.id}/`));
  const nonces = async (org: TestOrganization) =>
    (await t.db.query('SELECT 1 FROM storage_upload_nonces WHERE organization_id = $1', [org.id])).rowCount;

  describe('pre-allocated signed URLs', () => {
    it('50 racing requests never reserve past the allocation: exactly floor(allocation / size) succeed', async () => {
      const org = await createOrganization(t);
      const allocation = 1000;
      const size = 73;
      await setAllocation(org, allocation);
      const answers = await Promise.all(Array.from({ length: 50 }, () => requestUrl(org, size)));
      const granted = answers.filter((answer) => answer.status === 200);
      expect(granted).toHaveLength(Math.floor(allocation / size)); // 13
      for (const refused of answers.filter((answer) => answer.status !== 200)) {
        expectStorageError(
          refused,
          413,
          'ALLOCATION_EXCEEDED',
          /^The file \(73 bytes\) does not fit in the organization's storage allocation: 949 of its 1000 bytes are used or reserved by pending uploads, 51 left$/,
        );
      }
      const reserved = await rows(org);
      expect(reserved).toHaveLength(13);
      expect(reserved.reduce((sum, row) => sum + row.size, 0)).toBe(949);
      expect(new Set(reserved.map((row) => row.id))).toEqual(new Set(granted.map((answer) => answer.body.mediaId)));
    });

    it('counts complete files and unexpired pending items; an expired one stops reserving', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 1000);
      await uploadFile(t, org, bytes(400));
      const pending = await signedUrl(t, org, { contentType: 'video/mp4', size: 500 });
      expectStorageError(await requestUrl(org, 101), 413, 'ALLOCATION_EXCEEDED', /\(101 bytes\).*900 of its 1000 bytes.*100 left/);
      const filling = await requestUrl(org, 100).expect(200); // exactly full is allowed
      expectStorageError(await requestUrl(org, 1), 413, 'ALLOCATION_EXCEEDED', /1000 of its 1000 bytes.*0 left/);

      // The 500-byte URL expires unused: its bytes are free again, before the sweeper removes the row.
      await t.db.query("UPDATE storage_items SET upload_expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [pending.mediaId]);
      await requestUrl(org, 500).expect(200);
      expectStorageError(await requestUrl(org, 1), 413, 'ALLOCATION_EXCEEDED');

      // An expired URL whose upload is still streaming keeps its bytes: they are about to land.
      await t.db.query(
        "UPDATE storage_items SET upload_expires_at = clock_timestamp() - interval '1 second', upload_claimed_at = clock_timestamp() WHERE id = $1",
        [filling.body.mediaId],
      );
      expectStorageError(await requestUrl(org, 1), 413, 'ALLOCATION_EXCEEDED');
    });

    it('the upload to a reserved URL completes even when the organization is full, and the limit follows the allocation', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 100);
      const body = bytes(100);
      const signed = await signedUrl(t, org, { contentType: 'image/png', size: 100 });
      expectStorageError(await requestUrl(org, 1), 413, 'ALLOCATION_EXCEEDED');
      await put(t, signed.url, body, 'image/png').expect(200);
      expectStorageError(await requestUrl(org, 1), 413, 'ALLOCATION_EXCEEDED');
      // A 0-byte file fits in a full allocation; nothing fits in one already past its allocation.
      await requestUrl(org, 0).expect(200);
      await setAllocation(org, 150);
      await requestUrl(org, 50).expect(200);
      await setAllocation(org, 99);
      expectStorageError(await requestUrl(org, 0), 413, 'ALLOCATION_EXCEEDED', /150 of its 99 bytes.*0 left/);
      const stats = await request(t.http).get('/v1/storage').set(bearer(org.key)).expect(200);
      expect(stats.body).toMatchObject({ totalStorage: 99, usedStorage: 100, overageStorage: 1 });
    });

    it('checks the other rules first: a size over MAX_UPLOAD_BYTES is PAYLOAD_TOO_LARGE, bad input a 400', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 10);
      expectStorageError(await requestUrl(org, t.config.storage.maxUploadBytes + 1), 413, 'PAYLOAD_TOO_LARGE', /MAX_UPLOAD_BYTES/);
      expectStorageError(await requestUrl(org, 20, 'nope'), 400, 'VALIDATION_ERROR', /contentType/);
      expect(await rows(org)).toEqual([]);
    });

    it('each organization has its own allocation', async () => {
      const full = await createOrganization(t);
      const other = await createOrganization(t);
      await setAllocation(full, 10);
      await setAllocation(other, 10);
      await requestUrl(full, 10).expect(200);
      expectStorageError(await requestUrl(full, 1), 413, 'ALLOCATION_EXCEEDED');
      await requestUrl(other, 10).expect(200);
    });
  });

  describe('non-allocated uploads', () => {
    it('refuses a file past the room left and stores nothing; the URL then takes a file that fits', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 1000);
      await uploadFile(t, org, bytes(600));
      await signedUrl(t, org, { contentType: 'image/png', size: 100 }); // pending, reserving 100
      const before = await rows(org);
      const signed = await signedUrl(t, org);

      const refused = await post(t, signed.url, bytes(301), { contentType: 'image/png' });
      expectStorageError(
        refused,
        413,
        'ALLOCATION_EXCEEDED',
        /^The file is larger than the 300 bytes left in the organization's storage allocation: 700 of its 1000 bytes are used or reserved by pending uploads$/,
      );
      expect(await rows(org)).toEqual(before);
      expect(await orgKeys(org)).toHaveLength(1);
      expect(await temporaryFiles(t)).toEqual([]);
      expect(await nonces(org)).toBe(0);

      const fits = await post(t, signed.url, bytes(300), { contentType: 'image/png' }).expect(201);
      expect(fits.body).toMatchObject({ size: 300, state: 'complete' });
      expectStorageError(await post(t, (await signedUrl(t, org)).url, bytes(1)), 413, 'ALLOCATION_EXCEEDED', /0 bytes left/);
      // A 0-byte file still fits in a full allocation.
      await post(t, (await signedUrl(t, org)).url, Buffer.alloc(0)).expect(201);
    });

    it('cuts off a large file as it streams, long before its end, and stores nothing', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 64 * 1024);
      const signed = await signedUrl(t, org);
      const refused = await post(t, signed.url, bytes(20 * 1024 * 1024));
      expectStorageError(refused, 413, 'ALLOCATION_EXCEEDED', /65536 bytes left/);
      expect(await rows(org)).toEqual([]);
      expect(await orgKeys(org)).toEqual([]);
      expect(await temporaryFiles(t)).toEqual([]);
    });

    it('racing uploads are checked again when they commit, so together they cannot overshoot', async () => {
      // Every upload starts while the organization is empty, so each streams with all 1000 bytes as its room;
      // the commit, under the organization's lock, lets only two of the 400-byte files in.
      const org = await createOrganization(t);
      await setAllocation(org, 1000);
      const urls = await Promise.all(Array.from({ length: 5 }, () => signedUrl(t, org)));
      const answers = await Promise.all(urls.map((signed) => post(t, signed.url, bytes(400))));
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 413, 413, 413]);
      for (const refused of answers.filter((answer) => answer.status === 413)) {
        expect(refused.body.error.code).toBe('ALLOCATION_EXCEEDED');
      }
      const stored = await rows(org);
      expect(stored.map((row) => row.size)).toEqual([400, 400]);
      expect(await orgKeys(org)).toHaveLength(2);
      expect(await temporaryFiles(t)).toEqual([]);
    });

    it('an upload that fit when it started is refused at commit if the room went while it streamed', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 1000);
      const slow = await signedUrl(t, org);
      const boundary = 'allocation-test-boundary';
      const upload = rawRequest(t, 'POST', slow.url, { 'Content-Type': `multipart/form-data; boundary=${boundary}` });
      await upload.write(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: image/png\r\n\r\n`),
      );
      await upload.write(bytes(400));
      // Streaming into the store (so its room, all 1000 bytes, was read) when another upload takes 700.
      await eventually(async () => (await temporaryFiles(t)).length === 1, { timeoutMs: 10_000 });
      await post(t, (await signedUrl(t, org)).url, bytes(700)).expect(201);
      await upload.write(Buffer.from(`\r\n--${boundary}--\r\n`));
      expectStorageError(
        await upload.finish(),
        413,
        'ALLOCATION_EXCEEDED',
        /^The file \(400 bytes\) does not fit in the organization's storage allocation: 700 of its 1000 bytes are used or reserved by pending uploads, 300 left$/,
      );
      expect((await rows(org)).map((row) => row.size)).toEqual([700]);
      expect(await orgKeys(org)).toHaveLength(1);
      expect(await temporaryFiles(t)).toEqual([]);
      expect(await nonces(org)).toBe(1); // the 700-byte upload's; the refused one gave its URL back
      await post(t, slow.url, bytes(300)).expect(201);
    });

    it('pending reservations and non-allocated uploads share the allocation', async () => {
      const org = await createOrganization(t);
      await setAllocation(org, 1000);
      await post(t, (await signedUrl(t, org)).url, bytes(700)).expect(201);
      expectStorageError(await requestUrl(org, 301), 413, 'ALLOCATION_EXCEEDED', /700 of its 1000 bytes/);
      await requestUrl(org, 300).expect(200);
      expectStorageError(await post(t, (await signedUrl(t, org)).url, bytes(1)), 413, 'ALLOCATION_EXCEEDED');
    });
  });
});

describe('storage allocation without STORAGE_ENFORCE_ALLOCATION (the default)', () => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp('local');
  });
  afterAll(() => t.close());

  it('is off, so the allocation is only reported', async () => {
    expect(t.config.storage.enforceAllocation).toBe(false);
    const org = await createOrganization(t);
    await admin(t).patch(`/organizations/${org.id}`).send({ storageAllocation: 100 }).expect(200);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        request(t.http).get('/v1/storage/signed-url').query({ contentType: 'image/png', size: 73 }).set(bearer(org.key)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    await put(t, answers[0].body.url, bytes(73), 'image/png').expect(200);
    await post(t, (await signedUrl(t, org)).url, bytes(500)).expect(201);
    const stats = await request(t.http).get('/v1/storage').set(bearer(org.key)).expect(200);
    expect(stats.body).toMatchObject({ totalStorage: 100, usedStorage: 573, overageStorage: 473 });
  });
});
