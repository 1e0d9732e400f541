import request from 'supertest';
import { runMigrations } from '../../src/database/data-source-options';
import { FlagConfigCache } from '../../src/flag-config/flag-config.cache';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { eventually } from '../support/eventually';
import { expectApiError, expectStorageError } from '../support/expect-error';
import { describeWithBinaries, postgresBinDir } from '../support/servers/binaries';
import { PostgresServer, startPostgresServer } from '../support/servers/postgres-server';
import { createTestApp, TestApp } from '../support/test-app';

// The app on a PostgreSQL server of the test's own, which the test stops and starts again.
describeWithBinaries('the database going away', { postgres: postgresBinDir() })('the database going away', () => {
  let pg: PostgresServer;
  let t: TestApp;
  let org: TestOrganization;
  let etag: string;

  beforeAll(async () => {
    pg = await startPostgresServer();
    await runMigrations(pg.url);
    t = await createTestApp({}, { databaseUrl: pg.url });
    org = await createOrganization(t);
    await createFlag(t, org.key, { key: 'double-xp' });
    etag = (await api(t, org.key).get('/flags/config').expect(200)).headers.etag;
  });
  afterAll(async () => {
    await t.close();
    await pg.close();
  });

  it('polls answer from memory, writes answer 503 within 10 s, and everything resumes when it is back', async () => {
    await pg.stop();
    // Even a payload that is due for a rebuild is served from what this instance last built.
    t.app.get(FlagConfigCache).invalidateAll();
    for (let i = 0; i < 5; i += 1) {
      const poll = await api(t, org.key).get('/flags/config').expect(200);
      expect(poll.headers.etag).toBe(etag);
      expect(poll.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['double-xp']);
    }
    await api(t, org.key).get('/flags/config').set('If-None-Match', etag).expect(304);

    const started = Date.now();
    const write = await api(t, org.key).post('/flags').send({ key: 'during-outage', name: 'x', type: 'boolean', value: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    expectApiError(write, 503, 'SERVICE_UNAVAILABLE', /database is unavailable/);
    const read = await api(t, org.key).get('/flags');
    expectApiError(read, 503, 'SERVICE_UNAVAILABLE');
    const storage = await request(t.http).get('/v1/storage/items').set('Authorization', `Bearer ${org.key}`);
    expectStorageError(storage, 503, 'SERVICE_UNAVAILABLE');
    await request(t.http).get('/health').expect(503);

    await pg.start();
    const resumed = Date.now();
    await eventually(
      async () => (await api(t, org.key).post('/flags').send({ key: 'after-outage', name: 'x', type: 'boolean', value: true })).status === 201,
      { timeoutMs: 10_000, intervalMs: 200, what: 'a write succeeding after the database is back' },
    );
    expect(Date.now() - resumed).toBeLessThan(10_000);
    const poll = await api(t, org.key).get('/flags/config').expect(200);
    expect(poll.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['after-outage', 'double-xp']);
    await request(t.http).get('/health').expect(200);
  });
});
