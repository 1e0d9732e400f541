import { api, createFlag } from '../factories/flags.factory';
import { createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { uploadFile } from '../factories/storage.factory';
import { Permission } from '../../src/auth/permission';
import { openSse, SseBlock, SseConnection } from '../support/sse-client';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * GET /v1/events (decisions.md, "Console"): a signed-in member's stream of what changed in the organization, from
 * every instance. Two instances share one database here; the stream is held on the second, changes are made on the
 * first (its bus carries them: PostgreSQL LISTEN/NOTIFY, or Redis with REDIS_URL).
 */
describe('the organization event stream', () => {
  let a: TestApp;
  let b: TestApp;
  let org: TestOrganization;
  let maya: SignedIn;
  const open: SseConnection[] = [];

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({}, { sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });
  beforeEach(async () => {
    org = await createOrganization(a);
    maya = await memberSignedIn(a, org.id, 'viewer');
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  async function listen(app: TestApp, who: SignedIn = maya, organizationId = org.id): Promise<SseConnection> {
    const stream = await openSse(`${app.config.urls.baseUrl}/events?organizationId=${organizationId}`, { Cookie: who.cookie });
    open.push(stream);
    return stream;
  }
  const data = (block: SseBlock) => JSON.parse(block.data!);

  it('tells a member on another instance of every flag change, within a second, a deletion included', async () => {
    const stream = await listen(b);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-cache');

    const flag = await createFlag(a, org.key, { key: 'double-xp', type: 'boolean', value: false });
    expect(data(await stream.next((block) => block.event === 'flags', 1_000))).toEqual({ flagIds: [flag.id] });
    await api(a, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed' }).expect(200);
    await stream.next(
      (block) => block.event === 'flags' && data(block).flagIds[0] === flag.id && stream.blocks.filter((x) => x.event === 'flags').length === 2,
      1_000,
    );
    await api(a, org.key).delete(`/flags/${flag.id}`).expect(204);
    await stream.next((block) => block.event === 'flags' && stream.blocks.filter((x) => x.event === 'flags').length === 3, 1_000);
    expect(stream.blocks.filter((block) => block.event === 'flags').map(data)).toEqual([
      { flagIds: [flag.id] },
      { flagIds: [flag.id] },
      { flagIds: [flag.id] },
    ]);
  });

  it('tells of an import in one event with every id', async () => {
    const stream = await listen(b);
    const flags = Array.from({ length: 3 }, (_, index) => ({
      key: `f${index}`,
      name: `F${index}`,
      description: null,
      type: 'boolean',
      value: true,
      runtime: 'shared',
      archived: false,
    }));
    await api(a, org.key).post('/flags/import').send({ flags }).expect(200);
    const event = await stream.next((block) => block.event === 'flags', 1_000);
    expect(data(event).flagIds).toHaveLength(3);
  });

  it('tells of completed uploads, deletes and purges', async () => {
    const stream = await listen(b);
    const item = await uploadFile(a, org, Buffer.from('png bytes'), 'image/png');
    expect(data(await stream.next((block) => block.event === 'storage', 1_000))).toEqual({ ids: [item.id], change: 'uploaded' });
    await api(a, org.key).delete(`/storage/${item.id}`).expect(200);
    expect(data(await stream.next((block) => block.event === 'storage' && data(block).change === 'deleted', 1_000))).toEqual({
      ids: [item.id],
      change: 'deleted',
    });
    const second = await uploadFile(a, org, Buffer.from('more'), 'image/png');
    await api(a, org.key).delete('/storage/purge').send({ kind: 'image' }).expect(200);
    expect(data(await stream.next((block) => block.event === 'storage' && data(block).change === 'purged', 1_000))).toEqual({
      ids: [second.id],
      change: 'purged',
    });
  });

  it("never tells one organization of another's changes", async () => {
    const other = await createOrganization(a);
    const stream = await listen(b);
    await createFlag(a, other.key, { key: 'theirs' });
    const mine = await createFlag(a, org.key, { key: 'mine' });
    // Events arrive in order: once ours is here, theirs would have been too.
    await stream.next((block) => block.event === 'flags', 1_000);
    expect(stream.blocks.filter((block) => block.event === 'flags').map(data)).toEqual([{ flagIds: [mine.id] }]);
  });

  it('ends the stream when the session ends (on any instance)', async () => {
    const stream = await listen(b);
    await asSession(a, maya).post('/auth/logout').expect(204);
    await expect(Promise.race([stream.ended.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('open'), 1_500))])).resolves.toBe(
      'ended',
    );
  });

  it('refuses an API key, a request without a session, and an organization the person is not a member of', async () => {
    const key = await createApiKey(a, org.id, [Permission.FLAGS_READ]);
    const withKey = await openSse(`${b.config.urls.baseUrl}/events?organizationId=${org.id}`, { Authorization: `Bearer ${key.key}` });
    expect(withKey.status).toBe(403);
    const anonymous = await openSse(`${b.config.urls.baseUrl}/events?organizationId=${org.id}`);
    expect(anonymous.status).toBe(401);
    const other = await createOrganization(a);
    const stranger = await listen(b, maya, other.id);
    expect(stranger.status).toBe(403);
    const noOrganization = await openSse(`${b.config.urls.baseUrl}/events`, { Cookie: maya.cookie });
    expect(noOrganization.status).toBe(403);
  });

  it('holds at most 10 streams per person on an instance', async () => {
    for (let index = 0; index < 10; index += 1) expect((await listen(b)).status).toBe(200);
    const eleventh = await listen(b);
    expect(eleventh.status).toBe(429);
    expect(JSON.parse(await eleventh.body())).toMatchObject({ error: 'TOO_MANY_STREAMS' });
  });
});
