import request from 'supertest';
import { api, createFlag } from '../factories/flags.factory';
import { bearer } from '../factories/organizations.factory';
import { rawRequest } from '../factories/storage.factory';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

// Bodies that are not JSON must never be read as "no fields": for a purge that would mean "every file".
describe('request bodies', () => {
  const { t, org } = useTestApp();

  async function storedFiles(): Promise<number> {
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM storage_items WHERE organization_id = $1', [org.id]);
    return rows[0].n;
  }

  /** What `answer` resolves to if it does within `ms`, else null. */
  async function within<T>(ms: number, answer: Promise<T>): Promise<T | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function uploadOne(): Promise<void> {
    const signed = await request(t.http).get('/v1/storage/signed-url?contentType=image/png&size=3').set(bearer(org.key)).expect(200);
    await request(signed.body.url).put('').set('Content-Type', 'image/png').send(Buffer.from('abc')).expect(200);
  }

  it.each([
    ['a form body (curl -d)', 'application/x-www-form-urlencoded', 'kind=video&dryRun=true'],
    ['a text body', 'text/plain', '{"kind":"video","dryRun":true}'],
  ])('refuses a purge with %s with 415 and purges nothing', async (_case, contentType, body) => {
    await uploadOne();
    const response = await request(t.http).delete('/v1/storage/purge').set(bearer(org.key)).set('Content-Type', contentType).send(body).expect(415);
    expect(response.body).toEqual({
      error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Request bodies must be JSON: send Content-Type: application/json' },
    });
    expect(await storedFiles()).toBe(1);
  });

  it('refuses a flag edit sent as a form instead of silently changing nothing', async () => {
    const flag = await createFlag(t, org.key, { key: 'k' });
    const response = await api(t, org.key).patch(`/flags/${flag.id}`).type('form').send({ name: 'renamed' }).expect(415);
    expect(response.body).toEqual({
      statusCode: 415,
      error: 'UNSUPPORTED_MEDIA_TYPE',
      message: 'Request bodies must be JSON: send Content-Type: application/json',
    });
  });

  it('answers malformed JSON with 400 in the shape of the surface addressed', async () => {
    const flags = await api(t, org.key).post('/flags').set('Content-Type', 'application/json').send('{"key":').expect(400);
    expect(flags.body).toEqual({ statusCode: 400, error: 'VALIDATION_ERROR', message: expect.stringMatching(/^Request body is not valid JSON/) });
    const storage = await request(t.http)
      .delete('/v1/storage/purge')
      .set(bearer(org.key))
      .set('Content-Type', 'application/json')
      .send('{')
      .expect(400);
    expect(storage.body).toEqual({ error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/^Request body is not valid JSON/) } });
  });

  it('answers an oversized JSON body with 413', async () => {
    const response = await api(t, org.key)
      .post('/flags')
      .send({ key: 'big', name: 'n', type: 'string', value: 'x'.repeat(300 * 1024) })
      .expect(413);
    expect(response.body).toMatchObject({ statusCode: 413, error: 'PAYLOAD_TOO_LARGE' });
  });

  it.each([
    ['a flag route', 'POST', '/flags', 'api'],
    ['the storage API', 'DELETE', '/storage/purge', 'storage'],
  ])('answers a declared Content-Length over the limit on %s with 413 at once, without reading the body', async (_case, method, path, shape) => {
    await uploadOne();
    // 1 GB declared, a few bytes sent: the answer must not wait for the rest (HTTP_REQUEST_TIMEOUT_SECONDS is 30 s here).
    const sent = rawRequest(t, method, `${t.config.urls.baseUrl}${path}`, {
      ...bearer(org.key),
      'Content-Type': 'application/json',
      'Content-Length': String(1024 ** 3),
    });
    await sent.write(Buffer.from('{"dryRun":'));
    const started = Date.now();
    const answer = await within(5_000, sent.answer);
    sent.abort();
    expect(answer).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
    if (shape === 'api') expectApiError(answer!, 413, 'PAYLOAD_TOO_LARGE', /^Request body must be at most 256kb$/);
    else expectStorageError(answer!, 413, 'PAYLOAD_TOO_LARGE', /^Request body must be at most 256kb$/);
    // The connection is not kept for a body nobody will read.
    expect(answer!.headers.connection).toBe('close');
    expect(await storedFiles()).toBe(1);
  });

  it("leaves upload bodies to the upload's own limits: past the signed size at once, past the JSON limit freely", async () => {
    const small = await request(t.http).get('/v1/storage/signed-url?contentType=image/png&size=3').set(bearer(org.key)).expect(200);
    const sent = rawRequest(t, 'PUT', small.body.url, { 'Content-Type': 'image/png', 'Content-Length': String(1024 ** 3) });
    await sent.write(Buffer.from('abc'));
    const answer = await within(5_000, sent.answer);
    sent.abort();
    expect(answer).not.toBeNull();
    expectStorageError(answer!, 413, 'PAYLOAD_TOO_LARGE', /3 bytes/);
    const size = 300 * 1024;
    const large = await request(t.http).get(`/v1/storage/signed-url?contentType=image/png&size=${size}`).set(bearer(org.key)).expect(200);
    await request(large.body.url).put('').set('Content-Type', 'image/png').send(Buffer.alloc(size)).expect(200);
  });

  it('answers unknown storage routes in the storage shape and others in the API shape', async () => {
    const storage = await request(t.http).get('/v1/storage/nothing-here/at-all').set(bearer(org.key));
    expectStorageError(storage, 404, 'NOT_FOUND', /^Cannot GET \/v1\/storage\/nothing-here\/at-all$/);
    const flags = await request(t.http).get('/v1/nothing-here').set(bearer(org.key));
    expectApiError(flags, 404, 'NOT_FOUND', /^Cannot GET \/v1\/nothing-here$/);
  });

  it('still accepts requests without a body, and JSON with a charset', async () => {
    await api(t, org.key)
      .delete(`/flags/${(await createFlag(t, org.key, { key: 'gone' })).id}`)
      .expect(204);
    await api(t, org.key)
      .post('/flags')
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ key: 'k2', name: 'n', type: 'boolean', value: true }))
      .expect(201);
  });

  it('never answers 304 where no validator is promised, whatever If-None-Match says', async () => {
    const listed = await api(t, org.key).get('/flags').set('If-None-Match', '*').expect(200);
    expect(listed.headers).not.toHaveProperty('etag');
    await request(t.http).get('/health').set('If-None-Match', '*').expect(200);
  });

  it('leaves a body on a GET unread: it means nothing there, and is never an error the route does not document', async () => {
    await createFlag(t, org.key, { key: 'listed' });
    const listed = await api(t, org.key).get('/flags').set('Content-Type', 'text/plain').send('{"not": json').expect(200);
    expect(listed.body.results.map((flag: { key: string }) => flag.key)).toEqual(['listed']);
  });

  describe('lone UTF-16 surrogates (JSON lets a client send "\\ud800"; it is not Unicode and PostgreSQL refuses it)', () => {
    const LONE = '"a\\ud800b"';
    const json = (call: request.Test, body: string) => call.set('Content-Type', 'application/json').send(body);

    it.each([
      ['value', `{"key":"k","name":"n","type":"string","value":${LONE}}`],
      ['name', `{"key":"k","name":${LONE},"type":"boolean","value":true}`],
      ['description', `{"key":"k","name":"n","description":${LONE},"type":"boolean","value":true}`],
      ['value.nested[0]', `{"key":"k","name":"n","type":"json","value":{"nested":[${LONE}]}}`],
    ])("refuses one in a created flag's %s with a 400 naming it, and stores nothing", async (field, body) => {
      const response = await json(api(t, org.key).post('/flags'), body).expect(400);
      expectApiError(response, 400, 'VALIDATION_ERROR', new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')} must not contain a lone UTF-16 surrogate`));
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows[0].n).toBe(0);
    });

    it('refuses one in a flag edit', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', type: 'string', value: 'before' });
      const response = await json(api(t, org.key).patch(`/flags/${flag.id}`), `{"type":"string","value":${LONE}}`).expect(400);
      expectApiError(response, 400, 'VALIDATION_ERROR', /^value must not contain a lone UTF-16 surrogate/);
    });

    it('refuses one in storage metadata, as a query parameter and as the multipart field', async () => {
      const query = await request(t.http)
        .get('/v1/storage/signed-url')
        .query({ contentType: 'image/png', size: 3, metadata: '{"slot":"\\udc00"}' })
        .set(bearer(org.key));
      expectStorageError(query, 400, 'VALIDATION_ERROR', /must not contain a lone UTF-16 surrogate .*\("slot"\)$/);

      const form = await request(t.http).get('/v1/storage/signed-url').set(bearer(org.key)).expect(200);
      const upload = await request(form.body.url)
        .post('')
        .field('metadata', '{"slot":"\\ud800"}')
        .attach('file', Buffer.from('abc'), { filename: 'save.dat', contentType: 'application/octet-stream' });
      expectStorageError(upload, 400, 'VALIDATION_ERROR', /must not contain a lone UTF-16 surrogate .*\("slot"\)$/);
      expect(await storedFiles()).toBe(0);
    });

    it('still accepts surrogate pairs (emoji) everywhere', async () => {
      const created = await json(
        api(t, org.key).post('/flags'),
        '{"key":"k","name":"Pad \\ud83c\\udfae","type":"string","value":"\\ud83c\\udfae"}',
      ).expect(201);
      expect(created.body).toMatchObject({ name: 'Pad \u{1F3AE}', value: '\u{1F3AE}' });
    });
  });
});
