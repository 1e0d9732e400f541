import type { Browser } from 'playwright-core';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach, launchChromium } from './support/chromium';
import { OfrepPage, OfrepStart } from './support/ofrep-page';
import { PageServer, startPageServer } from './support/page-server';

/**
 * The README's "OpenFeature (OFREP)" and "Change stream", in a real browser: a web page on an origin
 * listed in CORS_ORIGINS reads the flags through the real @openfeature/web-sdk with OFREPWebProvider (loaded
 * unbundled from node_modules through an import map), and follows changes made through the API by the change
 * stream the bulk answer names in eventStreams.
 *
 * The provider never polls here (pollInterval 0, no refetch on visibility, no persisted cache): a change can only
 * reach the page through the stream. Every refetch the stream causes carries the event's ETag as
 * ?flagConfigEtag=, which the change test checks on each of the provider's requests.
 *
 * The page is served from http://127.0.0.1:<port>, the app (its PUBLIC_URL, so OFREP and the stream) from
 * http://localhost:<port>: every call, the EventSource included, is cross-origin.
 */
const STREAM_DEADLINE_MS = 3_000;
const STREAM_URL = /^http:\/\/localhost:\d+\/v1\/flags\/config\/stream\?token=[\w-]+\.[\w-]+$/;

describe('OpenFeature web SDK with OFREPWebProvider, from a web page on another origin (headless Chromium)', () => {
  let allowed: PageServer;
  let stranger: PageServer;
  let t: TestApp;
  let browser: Browser;
  let org: TestOrganization;
  const opened: OfrepPage[] = [];

  beforeAll(async () => {
    browser = await launchChromium(); // first: without Chromium, nothing else is worth starting
    [allowed, stranger] = await Promise.all([startPageServer(), startPageServer()]);
    t = await createTestApp({ CORS_ORIGINS: allowed.origin });
  });
  afterAll(() => closeEach(browser, allowed, stranger, t));
  beforeEach(async () => {
    org = await createOrganization(t);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close()));
  });

  /** One flag of each type. */
  async function flags() {
    return {
      doubleXp: await createFlag(t, org.key, { key: 'double-xp', type: 'boolean', value: true }),
      motd: await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Welcome back' }),
      xpRate: await createFlag(t, org.key, { key: 'xp-rate', type: 'number', value: 1.5 }),
      lootTable: await createFlag(t, org.key, { key: 'loot-table', type: 'json', value: { common: 70, rare: [25, 5] } }),
    };
  }

  /** The organization's current config ETag, as the stream's events and ?flagConfigEtag= carry it (unquoted). */
  const currentEtag = async (): Promise<string> => (await api(t, org.key).get('/flags/config').expect(200)).body.etag;

  const options = (headers: Record<string, string>): OfrepStart => ({
    baseUrl: t.config.urls.publicUrl,
    headers,
    // 0 is the provider's "never poll" (its default, stated here because the test depends on it).
    pollInterval: 0,
  });

  /** The OFREP page on `server`'s origin, closed after the test. */
  const open = async (server: PageServer = allowed) => {
    const page = await OfrepPage.open(browser, server);
    opened.push(page);
    return page;
  };

  /**
   * The OFREP page with a ready provider whose change stream is up: the stream's first event (the current ETag,
   * sent on connect) has made the provider refetch, which answered 304. A change made after this can only reach
   * the page by a later event.
   */
  async function streamingPage(headers: Record<string, string>): Promise<{ page: OfrepPage; etag: string }> {
    const page = await open();
    await page.startReady(options(headers));
    const etag = await currentEtag();
    const connectRefetch = await page.waitForStreamRefetch(etag, STREAM_DEADLINE_MS);
    expect(connectRefetch).toMatchObject({ status: 304, ifNoneMatch: `W/"${etag}"` });
    return { page, etag };
  }

  it('reads a boolean, a string, a number and a JSON flag with a bearer key, and falls back for an unknown key or a type mismatch', async () => {
    await flags();
    const page = await open();
    await page.startReady(options({ Authorization: `Bearer ${org.key}` }));

    const read = await page.read([
      { key: 'double-xp', type: 'boolean', defaultValue: false },
      { key: 'motd', type: 'string', defaultValue: 'fallback' },
      { key: 'xp-rate', type: 'number', defaultValue: 1 },
      { key: 'loot-table', type: 'object', defaultValue: {} },
    ]);
    const evaluated = (flagKey: string, value: unknown, type: string) => ({
      flagKey,
      value,
      reason: 'STATIC',
      variant: 'default',
      flagMetadata: { type, runtime: 'shared' },
    });
    expect(read).toEqual([
      evaluated('double-xp', true, 'boolean'),
      evaluated('motd', 'Welcome back', 'string'),
      evaluated('xp-rate', 1.5, 'number'),
      evaluated('loot-table', { common: 70, rare: [25, 5] }, 'json'),
    ]);

    const unknown = await page.readOne('no-such-flag', 'boolean', true);
    expect(unknown).toMatchObject({ flagKey: 'no-such-flag', value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' });
    const mismatched = await page.readOne('motd', 'number', 7);
    expect(mismatched).toMatchObject({ flagKey: 'motd', value: 7, reason: 'ERROR', errorCode: 'TYPE_MISMATCH' });

    // The first bulk evaluation named this key's change stream, and the browser opened it, once. (Its event on
    // connect is what the wait is for: it makes the provider refetch, by then the EventSource has been seen.)
    const { requests } = await page.recorded();
    const etag = await currentEtag();
    expect(requests[0]).toMatchObject({
      url: `${t.config.urls.publicUrl}/ofrep/v1/evaluate/flags`,
      ifNoneMatch: null,
      status: 200,
      etag: `W/"${etag}"`,
    });
    expect(requests[0].eventStreams).toEqual([{ type: 'sse', url: expect.stringMatching(STREAM_URL), inactivityDelaySec: 120 }]);
    await page.waitForStreamRefetch(etag, STREAM_DEADLINE_MS);
    expect(page.eventSources()).toEqual([{ method: 'GET', url: requests[0].eventStreams![0].url, resourceType: 'eventsource' }]);
  });

  it(`sees a flag changed through the API within ${STREAM_DEADLINE_MS / 1000} s, pushed by the change stream (the provider never polls)`, async () => {
    const { motd } = await flags();
    const { page, etag: before } = await streamingPage({ Authorization: `Bearer ${org.key}` });
    expect((await page.recorded()).changes).toEqual([]);

    const changedAt = Date.now();
    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP weekend!' }).expect(200);
    const change = await page.waitForChange('motd', 0, STREAM_DEADLINE_MS);
    expect(Date.now() - changedAt).toBeLessThan(STREAM_DEADLINE_MS);
    const after = await currentEtag();
    expect(after).not.toBe(before);

    expect(change.flagsChanged).toEqual(['motd']);
    expect(await page.readOne('motd', 'string', 'fallback')).toMatchObject({ value: 'Double XP weekend!', reason: 'STATIC' });
    expect(await page.readOne('double-xp', 'boolean', false)).toMatchObject({ value: true });

    // Every request the provider made: the initial evaluation, then one per stream event, each carrying that
    // event's ETag (the one on connect, then the change's); none from a poll.
    const { requests, changes } = await page.recorded();
    const bulk = `${t.config.urls.publicUrl}/ofrep/v1/evaluate/flags`;
    expect(requests.map(({ url, ifNoneMatch, status, etag }) => ({ url, ifNoneMatch, status, etag }))).toEqual([
      { url: bulk, ifNoneMatch: null, status: 200, etag: `W/"${before}"` },
      {
        url: `${bulk}?flagConfigEtag=${before}&flagConfigLastModified=${lastModifiedOf(requests[1].url)}`,
        ifNoneMatch: `W/"${before}"`,
        status: 304,
        etag: `W/"${before}"`,
      },
      {
        url: `${bulk}?flagConfigEtag=${after}&flagConfigLastModified=${lastModifiedOf(requests[2].url)}`,
        ifNoneMatch: `W/"${before}"`,
        status: 200,
        etag: `W/"${after}"`,
      },
    ]);
    expect(changes).toHaveLength(1);
    // One stream, never reopened.
    expect(page.eventSources().map((request) => request.url)).toEqual([requests[0].eventStreams![0].url]);
  });

  it('sees an archived flag go: the change names it, and it reads its fallback', async () => {
    const { doubleXp } = await flags();
    const { page } = await streamingPage({ Authorization: `Bearer ${org.key}` });

    await api(t, org.key).patch(`/flags/${doubleXp.id}`).send({ archived: true }).expect(200);
    const change = await page.waitForChange('double-xp', 0, STREAM_DEADLINE_MS);

    expect(change.flagsChanged).toEqual(['double-xp']);
    expect(await page.readOne('double-xp', 'boolean', false)).toMatchObject({ value: false, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' });
    expect(await page.readOne('xp-rate', 'number', 0)).toMatchObject({ value: 1.5, reason: 'STATIC' });
  });

  it('authenticates with the X-API-Key header instead: reads the flags and follows the change stream', async () => {
    const { xpRate } = await flags();
    const { page } = await streamingPage({ 'X-API-Key': org.key });
    expect(await page.readOne('xp-rate', 'number', 0)).toMatchObject({
      value: 1.5,
      reason: 'STATIC',
      flagMetadata: { type: 'number', runtime: 'shared' },
    });

    await api(t, org.key).patch(`/flags/${xpRate.id}`).send({ type: 'number', value: 2 }).expect(200);
    const change = await page.waitForChange('xp-rate', 0, STREAM_DEADLINE_MS);

    expect(change.flagsChanged).toEqual(['xp-rate']);
    expect(await page.readOne('xp-rate', 'number', 0)).toMatchObject({ value: 2, reason: 'STATIC' });
  });

  it('on an origin not in CORS_ORIGINS the provider cannot start, and every flag reads its fallback', async () => {
    await flags();
    const page = await open(stranger);
    const started = await page.start(options({ Authorization: `Bearer ${org.key}` }));

    expect(started).toMatchObject({ status: 'ERROR', error: { name: 'OFREPApiFetchError' } });
    expect(await page.readOne('double-xp', 'boolean', false)).toMatchObject({ value: false, reason: 'ERROR' });
    expect(page.eventSources()).toEqual([]);
  });
});

/** The flagConfigLastModified a stream-driven refetch carried (the event's, in unix seconds). */
function lastModifiedOf(url: string): string {
  const lastModified = new URL(url).searchParams.get('flagConfigLastModified');
  if (!lastModified || !/^\d+$/.test(lastModified)) throw new Error(`${url}: no flagConfigLastModified in unix seconds`);
  return lastModified;
}
