import request from 'supertest';
import { bearer, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { bytes, createStorageTestApp, pathOf, post, put, signedUrl, StorageTestApp } from '../factories/storage.factory';
import { expectStorageError } from '../support/expect-error';

/** A name with accents, a dash outside ASCII, CJK and an emoji: what the CDN must carry in UTF-8. */
const NAME = 'Übersicht – März 夜 🎮.png';
const FALLBACK = 'Ubersicht _ Marz _ _.png';

/** The name a Content-Disposition header gives in its filename* parameter, decoded. */
function extendedName(disposition: string): string {
  const match = /filename\*=UTF-8''([^;\s]+)/.exec(disposition);
  if (!match) throw new Error(`no filename* in ${disposition}`);
  return decodeURIComponent(match[1]);
}

/** A hand-made multipart body: its part headers exactly as given (supertest would quote and escape them). */
function multipart(partHeaders: string[], content: Buffer, metadata?: string): { contentType: string; body: Buffer } {
  const boundary = `----flagstore${Date.now()}`;
  const parts: Buffer[] = [];
  if (metadata !== undefined) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${metadata}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}\r\n${partHeaders.join('\r\n')}\r\n\r\n`, 'utf8'), content, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

/**
 * File names (decisions.md, "A studio's own deployment", "File names"): `fileName` in the signed-URL request or the
 * multipart part's filename, a column of its own, answered on the item only when set, and offered by the CDN's
 * Content-Disposition (RFC 6266 filename* with an ASCII fallback). The spec's metadata is untouched by it.
 */
describe('storage file names', () => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await createStorageTestApp('local');
  });
  afterAll(() => t.close());

  const signing = (org: TestOrganization) => request(t.http).get('/v1/storage/signed-url').set(bearer(org.key));
  const rows = async (org: TestOrganization) =>
    (await t.db.query('SELECT id, metadata, file_name, state FROM storage_items WHERE organization_id = $1 ORDER BY created_at', [org.id])).rows;
  const items = async (org: TestOrganization) =>
    (await request(t.http).get('/v1/storage/items').set(bearer(org.key)).expect(200)).body.items as Array<Record<string, unknown>>;
  const cdn = (mediaUrl: string) =>
    request(t.http)
      .get(pathOf(mediaUrl))
      .buffer(true)
      .parse((res, done) => {
        res.on('data', () => undefined);
        res.on('end', () => done(null, null));
      });

  it('names a pre-allocated upload: stored in its own column, answered as fileName, metadata exactly as sent', async () => {
    const org = await createOrganization(t);
    const body = bytes(300);
    const metadata = { level: 3, author: 'mira', public: true };
    const signed = await signedUrl(t, org, { contentType: 'image/png', size: body.length, metadata: JSON.stringify(metadata), fileName: NAME });
    expect(await rows(org)).toEqual([{ id: signed.mediaId, metadata, file_name: NAME, state: 'pending' }]);
    // The pending item is listed with its name already.
    expect((await items(org))[0]).toMatchObject({ id: signed.mediaId, fileName: NAME, metadata, state: 'pending' });

    const uploaded = await put(t, signed.url, body, 'image/png').expect(200);
    expect(uploaded.body).toEqual({
      id: signed.mediaId,
      kind: 'image',
      size: 300,
      state: 'complete',
      metadata,
      fileName: NAME,
      createdAt: expect.any(String),
      mediaUrl: signed.mediaUrl,
    });
    expect((await items(org))[0]).toEqual({ ...uploaded.body, mediaUrl: undefined });

    // An image is served inline, under its name: UTF-8 in filename*, an ASCII fallback in filename.
    for (const answer of [await cdn(signed.mediaUrl!).expect(200), await request(t.http).head(pathOf(signed.mediaUrl!)).expect(200)]) {
      const disposition = answer.headers['content-disposition'] as string;
      expect(disposition).toBe(`inline; filename="${FALLBACK}"; filename*=UTF-8''${encodeURIComponent(NAME)}`);
      expect(extendedName(disposition)).toBe(NAME);
      expect(disposition).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it('answers no fileName for a file without one, and the CDN keeps its old Content-Disposition', async () => {
    const org = await createOrganization(t);
    const image = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
    const document = await signedUrl(t, org, { contentType: 'application/pdf', size: 10 });
    const stored = await put(t, image.url, bytes(10), 'image/png').expect(200);
    await put(t, document.url, bytes(10), 'application/pdf').expect(200);
    expect(stored.body).not.toHaveProperty('fileName');
    for (const item of await items(org)) expect(item).not.toHaveProperty('fileName');
    expect((await cdn(image.mediaUrl!).expect(200)).headers['content-disposition']).toBeUndefined();
    expect((await cdn(document.mediaUrl!).expect(200)).headers['content-disposition']).toBe('attachment');
  });

  it('offers a named document as an attachment under its name, ranges included', async () => {
    const org = await createOrganization(t);
    const name = 'notes "final" 100%.pdf';
    const signed = await signedUrl(t, org, { contentType: 'application/pdf', size: 50, fileName: name });
    await put(t, signed.url, bytes(50), 'application/pdf').expect(200);
    for (const answer of [await cdn(signed.mediaUrl!).expect(200), await cdn(signed.mediaUrl!).set('Range', 'bytes=0-9').expect(206)]) {
      const disposition = answer.headers['content-disposition'] as string;
      expect(disposition).toBe(`attachment; filename="notes _final_ 100_.pdf"; filename*=UTF-8''notes%20%22final%22%20100%25.pdf`);
      expect(extendedName(disposition)).toBe(name);
    }
  });

  it('accepts 255 characters (emoji count as one each) and refuses every other fileName with a 400 naming it, storing nothing', async () => {
    const org = await createOrganization(t);
    const sign = (fileName: string | string[]) => signing(org).query({ contentType: 'image/png', size: 10, fileName });
    await sign('x'.repeat(255)).expect(200);
    await sign('🎮'.repeat(255)).expect(200);
    await sign('..').expect(200);
    const before = (await rows(org)).length;

    const cases: Array<[string | string[], RegExp]> = [
      ['', /^fileName must be 1-255 characters, without \/, \\ or control characters \(got 0 characters\)$/],
      ['x'.repeat(256), /^fileName must be 1-255 characters.*\(got 256 characters\)$/],
      ['🎮'.repeat(256), /^fileName .*\(got 256 characters\)$/],
      ['maps/level.png', /^fileName .*holds a \/\)$/],
      ['C:\\fakepath\\level.png', /^fileName .*holds a \\\)$/],
      ['line\nbreak.png', /^fileName .*U\+000A\)$/],
      ['bell\u0007.png', /^fileName .*U\+0007\)$/],
      ['next\u0085line.png', /^fileName .*U\+0085\)$/],
      ['del\u007f.png', /^fileName .*U\+007F\)$/],
      ['nul\u0000.png', /fileName must not contain the NUL character/],
      [['a.png', 'b.png'], /^fileName must be a string/],
    ];
    for (const [fileName, message] of cases) {
      expectStorageError(await sign(fileName), 400, 'VALIDATION_ERROR', message);
    }
    // Not in the non-allocated mode, where the file part's filename names the file.
    expectStorageError(await signing(org).query({ fileName: 'a.png' }), 400, 'VALIDATION_ERROR', /^fileName requires contentType and size/);
    expect((await rows(org)).length).toBe(before);
  });

  it('keeps the spec metadata rules exact beside a fileName: a "fileName" key is metadata, not the name', async () => {
    const org = await createOrganization(t);
    // Ten keys and exactly 2048 bytes of compact JSON are still allowed, with a file name beside them.
    const metadata: Record<string, string> = {};
    for (let i = 0; i < 9; i += 1) metadata[`k${i}`] = 'v'.repeat(200);
    const base = JSON.stringify({ ...metadata, fileName: '' }).length;
    metadata.fileName = 'm'.repeat(2048 - base);
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(2048);
    const signed = await signedUrl(t, org, { contentType: 'text/plain', size: 4, metadata: JSON.stringify(metadata), fileName: 'real.txt' });
    const stored = await put(t, signed.url, Buffer.from('abcd'), 'text/plain').expect(200);
    expect(stored.body.metadata).toEqual(metadata);
    expect(stored.body.fileName).toBe('real.txt');
    // A "fileName" in metadata alone names nothing.
    const other = await signedUrl(t, org, { contentType: 'text/plain', size: 1, metadata: JSON.stringify({ fileName: 'not-a-name.txt' }) });
    const plain = await put(t, other.url, Buffer.from('a'), 'text/plain').expect(200);
    expect(plain.body.metadata).toEqual({ fileName: 'not-a-name.txt' });
    expect(plain.body).not.toHaveProperty('fileName');
    expect((await cdn(other.mediaUrl!).expect(200)).headers['content-disposition']).toBe('attachment');
    // And a rule broken in metadata is still refused, whatever the name.
    expectStorageError(
      await signing(org).query({ contentType: 'text/plain', size: 1, metadata: JSON.stringify({ ...metadata, extra: 1 }), fileName: 'ok.txt' }),
      400,
      'VALIDATION_ERROR',
      /^metadata must have at most 10 keys/,
    );
  });

  it("names a multipart upload by its file part's filename, in UTF-8 raw or as filename*, beside its metadata", async () => {
    const org = await createOrganization(t);
    const viaSupertest = await post(t, (await signedUrl(t, org)).url, bytes(20), {
      filename: 'level-3.ogg',
      contentType: 'audio/ogg',
      metadata: '{"track":7}',
    }).expect(201);
    expect(viaSupertest.body).toMatchObject({ kind: 'audio', fileName: 'level-3.ogg', metadata: { track: 7 } });

    // Browsers send the name as raw UTF-8 bytes in filename="...".
    const raw = multipart([`Content-Disposition: form-data; name="file"; filename="${NAME}"`, 'Content-Type: image/png'], bytes(30));
    const rawAnswer = await request(t.http)
      .post(pathOf((await signedUrl(t, org)).url))
      .set('Content-Type', raw.contentType)
      .send(raw.body)
      .expect(201);
    expect(rawAnswer.body.fileName).toBe(NAME);
    expect(extendedName((await cdn(rawAnswer.body.mediaUrl).expect(200)).headers['content-disposition'] as string)).toBe(NAME);

    // RFC 7578 clients may use filename* instead.
    const extended = multipart(
      [`Content-Disposition: form-data; name="file"; filename*=UTF-8''${encodeURIComponent('résumé.pdf')}`, 'Content-Type: application/pdf'],
      bytes(30),
      '{"v":1}',
    );
    const extendedAnswer = await request(t.http)
      .post(pathOf((await signedUrl(t, org)).url))
      .set('Content-Type', extended.contentType)
      .send(extended.body)
      .expect(201);
    expect(extendedAnswer.body).toMatchObject({ fileName: 'résumé.pdf', metadata: { v: 1 } });
    expect((await cdn(extendedAnswer.body.mediaUrl).expect(200)).headers['content-disposition']).toBe(
      `attachment; filename="resume.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`,
    );

    // A path in the filename (old browsers sent one) keeps its last segment; no filename at all names nothing.
    const withPath = multipart(
      ['Content-Disposition: form-data; name="file"; filename="C:\\fakepath\\map.png"', 'Content-Type: image/png'],
      bytes(5),
    );
    const pathAnswer = await request(t.http)
      .post(pathOf((await signedUrl(t, org)).url))
      .set('Content-Type', withPath.contentType)
      .send(withPath.body);
    expect(pathAnswer.status).toBe(201);
    expect(pathAnswer.body.fileName).toBe('map.png');
    const unnamed = multipart(['Content-Disposition: form-data; name="file"', 'Content-Type: application/octet-stream'], bytes(5));
    const unnamedAnswer = await request(t.http)
      .post(pathOf((await signedUrl(t, org)).url))
      .set('Content-Type', unnamed.contentType)
      .send(unnamed.body)
      .expect(201);
    expect(unnamedAnswer.body).not.toHaveProperty('fileName');
    expect((await rows(org)).find((row) => row.id === unnamedAnswer.body.id).file_name).toBeNull();
  });

  it('refuses a multipart filename the API would refuse as fileName, naming it, and the URL stays usable', async () => {
    const org = await createOrganization(t);
    const signed = await signedUrl(t, org);
    const send = (filename: string) => {
      const form = multipart([`Content-Disposition: form-data; name="file"; filename="${filename}"`, 'Content-Type: text/plain'], bytes(10));
      return request(t.http).post(pathOf(signed.url)).set('Content-Type', form.contentType).send(form.body);
    };
    expectStorageError(
      await send('x'.repeat(256)),
      400,
      'VALIDATION_ERROR',
      /^The file part's filename \(the item's fileName\) must be 1-255 characters/,
    );
    expectStorageError(await send('tab\there.txt'), 400, 'VALIDATION_ERROR', /filename \(the item's fileName\) .*U\+0009/);
    expect(await rows(org)).toEqual([]);
    const ok = await send('fine.txt').expect(201);
    expect(ok.body.fileName).toBe('fine.txt');
  });

  it("refuses a name the schema's own check would refuse, whoever writes the row", async () => {
    const org = await createOrganization(t);
    const signed = await signedUrl(t, org, { contentType: 'image/png', size: 1, fileName: 'ok.png' });
    for (const bad of ['', 'a/b', 'a\\b', 'a\u0001b', 'a\u009fb', 'x'.repeat(256)]) {
      await expect(t.db.query('UPDATE storage_items SET file_name = $1 WHERE id = $2', [bad, signed.mediaId])).rejects.toThrow(
        /storage_items_file_name_valid/,
      );
    }
    await t.db.query('UPDATE storage_items SET file_name = $1 WHERE id = $2', ['🎮'.repeat(255), signed.mediaId]);
  });
});
