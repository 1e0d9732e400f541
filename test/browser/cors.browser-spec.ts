import type { Browser } from 'playwright-core';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { uploadFile } from '../factories/storage.factory';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';
import { BrowserPage, expectRefused, pixelOf, readable } from './support/browser-page';
import { closeEach, launchChromium } from './support/chromium';
import { CONTROL_COLOUR, PageServer, startPageServer } from './support/page-server';
import { Rgb, solidPng } from './support/png';

/**
 * README, "Browsers (CORS)", in a real browser: a web page on an origin listed in CORS_ORIGINS uses the
 * API with a bearer key, revalidates the config poll, uploads to signed URLs and draws the files it uploaded
 * from the CDN onto a canvas; a page on another origin cannot read the API, and nobody can read the admin API.
 *
 * The page is served from http://127.0.0.1:<port>; the app's PUBLIC_URL (so base_url, upload_url and the
 * CDN) is http://localhost:<port>: every call below is cross-origin.
 */
const RATE_LIMIT = 5;
const RED: Rgb = [220, 20, 60];
const BLUE: Rgb = [30, 90, 200];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('Flagstore from a web page on another origin (headless Chromium)', () => {
  let allowed: PageServer;
  let stranger: PageServer;
  let t: TestApp;
  let browser: Browser;
  let org: TestOrganization;
  const opened: BrowserPage[] = [];

  beforeAll(async () => {
    browser = await launchChromium(); // first: without Chromium, nothing else is worth starting
    [allowed, stranger] = await Promise.all([startPageServer(), startPageServer()]);
    t = await createTestApp({ CORS_ORIGINS: allowed.origin, CONFIG_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });
  });
  afterAll(() => closeEach(browser, allowed, stranger, t));
  beforeEach(async () => {
    org = await createOrganization(t);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close()));
  });

  /** The test page on `server`'s origin, in a browser context (and cache) of its own, closed after the test. */
  const open = async (server: PageServer) => {
    const page = await BrowserPage.open(browser, server);
    opened.push(page);
    return page;
  };
  const v1 = (path: string) => `${t.config.urls.baseUrl}${path}`;
  const withKey = (key: string, headers: Record<string, string> = {}) => ({ Authorization: `Bearer ${key}`, ...headers });
  const rgba = (colour: Rgb) => [...colour, 255];

  it('serves the page and the app on different origins', () => {
    expect(new URL(t.config.urls.baseUrl).origin).not.toBe(allowed.origin);
    expect(new URL(t.config.urls.uploadUrl).origin).not.toBe(allowed.origin);
    expect(new URL(t.config.urls.cdnUrl).origin).not.toBe(allowed.origin);
    expect(stranger.origin).not.toBe(allowed.origin);
  });

  it('calls the API with a bearer key: creates a flag, lists it, and reads the exposed X-Request-Id', async () => {
    const page = await open(allowed);
    const created = readable(
      page,
      'POST /v1/flags',
      await page.request(v1('/flags'), {
        method: 'POST',
        headers: withKey(org.key),
        body: { json: { key: 'browser-flag', name: 'From the browser', type: 'boolean', value: true } },
      }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'browser-flag', name: 'From the browser', value: true });

    const listed = readable(page, 'GET /v1/flags', await page.request(v1('/flags'), { headers: withKey(org.key) }));
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((flag: { key: string }) => flag.key)).toEqual(['browser-flag']);
    // Exposed: without Access-Control-Expose-Headers JavaScript would not see it.
    expect(listed.headers['x-request-id']).toMatch(UUID);
  });

  it('polls the config, reads its ETag and revalidates with If-None-Match to a 304', async () => {
    await createFlag(t, org.key, { key: 'double-xp', value: true });
    const page = await open(allowed);
    const first = readable(page, 'GET /v1/flags/config', await page.request(v1('/flags/config'), { headers: withKey(org.key), cache: 'no-store' }));
    expect(first.status).toBe(200);
    expect(first.body.flags).toEqual([{ key: 'double-xp', type: 'boolean', value: true, runtime: 'shared' }]);
    const etag = first.headers.etag;
    expect(etag).toEqual(expect.stringMatching(/^W\/".+"$/));

    // cache: 'no-store' leaves the browser's HTTP cache out, so the If-None-Match is sent as given and the 304
    // itself reaches JavaScript.
    const revalidated = readable(
      page,
      'GET /v1/flags/config with If-None-Match',
      await page.request(v1('/flags/config'), { headers: withKey(org.key, { 'If-None-Match': etag }), cache: 'no-store' }),
    );
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.etag).toBe(etag);

    // A changed flag changes the ETag: the same If-None-Match now answers 200.
    await api(t, org.key).post('/flags').send({ key: 'second', name: 'Second', type: 'number', value: 2 }).expect(201);
    const changed = readable(
      page,
      'GET /v1/flags/config after a change',
      await page.request(v1('/flags/config'), { headers: withKey(org.key, { 'If-None-Match': etag }), cache: 'no-store' }),
    );
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('reads Retry-After from a rate-limited config poll', async () => {
    const page = await open(allowed);
    const statuses: number[] = [];
    for (let poll = 0; poll < RATE_LIMIT; poll++) {
      const answer = readable(
        page,
        `config poll ${poll + 1}`,
        await page.request(v1('/flags/config'), { headers: withKey(org.key), cache: 'no-store' }),
      );
      statuses.push(answer.status);
    }
    expect(statuses).toEqual(Array(RATE_LIMIT).fill(200));
    const limited = readable(
      page,
      'the poll past the limit',
      await page.request(v1('/flags/config'), { headers: withKey(org.key), cache: 'no-store' }),
    );
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error: 'RATE_LIMITED' });
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('uploads a PNG with PUT to a pre-allocated URL and another as multipart FormData, and draws both from the CDN', async () => {
    const page = await open(allowed);
    const red = solidPng(RED);
    const blue = solidPng(BLUE);

    // Pre-allocated: the page asks the API for the URL, then PUTs the bytes (no bearer header).
    const preallocated = readable(
      page,
      'GET /v1/storage/signed-url (pre-allocated)',
      await page.request(v1(`/storage/signed-url?contentType=image%2Fpng&size=${red.length}`), { headers: withKey(org.key) }),
    );
    expect(preallocated.status).toBe(200);
    expect(preallocated.body).toMatchObject({ url: expect.any(String), mediaId: expect.stringMatching(UUID), mediaUrl: expect.any(String) });
    expect(new URL(preallocated.body.url).origin).toBe(new URL(t.config.urls.uploadUrl).origin);

    const put = readable(
      page,
      'PUT to the pre-allocated upload URL',
      await page.request(preallocated.body.url, { method: 'PUT', body: { bytes: red.toString('base64'), type: 'image/png' } }),
    );
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      id: preallocated.body.mediaId,
      kind: 'image',
      size: red.length,
      state: 'complete',
      mediaUrl: preallocated.body.mediaUrl,
    });

    // The upload host's errors reach the page too: the URL was single-use.
    const again = readable(
      page,
      'a second PUT to the used URL',
      await page.request(preallocated.body.url, { method: 'PUT', body: { bytes: red.toString('base64'), type: 'image/png' } }),
    );
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: { code: 'CONFLICT', message: expect.any(String) } });

    // Non-allocated: a multipart form with the file and its metadata.
    const nonAllocated = readable(
      page,
      'GET /v1/storage/signed-url (non-allocated)',
      await page.request(v1('/storage/signed-url'), { headers: withKey(org.key) }),
    );
    expect(nonAllocated.status).toBe(200);
    const posted = readable(
      page,
      'POST FormData to the non-allocated upload URL',
      await page.request(nonAllocated.body.url, {
        method: 'POST',
        body: { form: { file: { bytes: blue.toString('base64'), type: 'image/png', name: 'blue.png' }, metadata: '{"colour":"blue"}' } },
      }),
    );
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      kind: 'image',
      size: blue.length,
      state: 'complete',
      metadata: { colour: 'blue' },
      mediaUrl: expect.any(String),
    });
    expect(new URL(posted.body.mediaUrl).origin).toBe(new URL(t.config.urls.cdnUrl).origin);

    // Drawn with crossOrigin = 'anonymous': the image only loads, and the canvas is only readable, with CORS.
    const drawnRed = pixelOf(page, 'the PUT file drawn from its mediaUrl', await page.readPixel(put.body.mediaUrl, { x: 1, y: 1 }));
    expect(drawnRed).toEqual({ width: 2, height: 2, pixel: rgba(RED) });
    const drawnBlue = pixelOf(page, 'the posted file drawn from its mediaUrl', await page.readPixel(posted.body.mediaUrl));
    expect(drawnBlue).toEqual({ width: 2, height: 2, pixel: rgba(BLUE) });
  });

  it('reads the CDN with fetch: exposed ETag, Content-Length and Content-Range, a 304 and a readable 404', async () => {
    const png = solidPng(RED);
    const item = await uploadFile(t, org, png, 'image/png');
    const page = await open(allowed);

    const whole = readable(page, 'GET mediaUrl', await page.request(item.mediaUrl, { cache: 'no-store' }));
    expect(whole.status).toBe(200);
    expect(whole.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(png.length),
      etag: expect.stringMatching(/^"[0-9a-f]{64}"$/),
    });

    const part = readable(page, 'GET mediaUrl with Range', await page.request(item.mediaUrl, { headers: { Range: 'bytes=0-7' }, cache: 'no-store' }));
    expect(part.status).toBe(206);
    expect(part.headers).toMatchObject({ 'content-range': `bytes 0-7/${png.length}`, 'content-length': '8', 'accept-ranges': 'bytes' });

    const notModified = readable(
      page,
      'GET mediaUrl with If-None-Match',
      await page.request(item.mediaUrl, { headers: { 'If-None-Match': whole.headers.etag }, cache: 'no-store' }),
    );
    expect(notModified.status).toBe(304);

    const missing = readable(
      page,
      'GET an unknown file',
      await page.request(`${t.config.urls.cdnUrl}/c/${org.id}/00000000-0000-4000-8000-000000000000`),
    );
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('refuses the API to a page on an origin not in CORS_ORIGINS; the upload host and the CDN still answer it', async () => {
    const page = await open(stranger);
    // Preflighted (Authorization): the browser never sends the request.
    expectRefused(page, 'GET /v1/flags with a key', await page.request(v1('/flags'), { headers: withKey(org.key) }));
    expectRefused(
      page,
      'POST /v1/flags',
      await page.request(v1('/flags'), {
        method: 'POST',
        headers: withKey(org.key),
        body: { json: { key: 'intruder', name: 'x', type: 'boolean', value: true } },
      }),
    );
    expect((await api(t, org.key).get('/flags').expect(200)).body.results).toEqual([]);
    // Simple requests (no preflight): the answer is sent, but not handed to JavaScript.
    expectRefused(page, 'GET /v1/flags/config without headers', await page.request(v1('/flags/config'), { cache: 'no-store' }));
    expectRefused(page, 'GET /v1/flags without headers', await page.request(v1('/flags')));

    // The upload host and the CDN answer every origin.
    const signed = await api(t, org.key)
      .get(`/storage/signed-url?contentType=image%2Fpng&size=${solidPng(BLUE).length}`)
      .expect(200);
    const put = readable(
      page,
      'PUT from another origin',
      await page.request(signed.body.url, { method: 'PUT', body: { bytes: solidPng(BLUE).toString('base64'), type: 'image/png' } }),
    );
    expect(put.status).toBe(200);
    const drawn = pixelOf(page, 'the file drawn on a page of another origin', await page.readPixel(signed.body.mediaUrl));
    expect(drawn.pixel).toEqual(rgba(BLUE));
  });

  it('never answers the admin API cross-origin, even to an allowed origin', async () => {
    const page = await open(allowed);
    const name = `from-the-browser-${org.id}`;
    expectRefused(
      page,
      'POST /v1/admin/organizations with the admin token',
      await page.request(v1('/admin/organizations'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        body: { json: { name } },
      }),
    );
    // The preflight stopped it: the organization was never created.
    expect((await t.db.query('SELECT count(*)::int AS n FROM organizations WHERE name = $1', [name])).rows[0].n).toBe(0);
    // A simple request is sent, and its answer kept from JavaScript.
    expectRefused(page, 'GET /v1/admin/organizations without headers', await page.request(v1('/admin/organizations')));
  });

  it('control: the page can read its own image, but not one from an origin that sends no CORS headers', async () => {
    const page = await open(allowed);
    const own = pixelOf(page, 'a same-origin image', await page.readPixel(allowed.controlPngUrl));
    expect(own.pixel).toEqual(rgba(CONTROL_COLOUR));
    // The other page server sends no Access-Control-Allow-Origin: with crossOrigin the image does not load,
    // without it the canvas is tainted. This is what the CDN assertions above would meet without CORS.
    expect(await page.readPixel(stranger.controlPngUrl)).toEqual({ loadFailed: expect.any(String) });
    expect(await page.readPixel(stranger.controlPngUrl, { crossOrigin: null })).toEqual({
      readFailed: { name: 'SecurityError', message: expect.any(String) },
    });
    expectRefused(page, 'fetch of a file without CORS headers', await page.request(stranger.controlPngUrl));
  });
});
