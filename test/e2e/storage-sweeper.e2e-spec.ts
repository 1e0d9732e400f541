import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'pg';
import request from 'supertest';
import { OBJECT_STORE, ObjectStore, objectKeyFor, StoredObject } from '../../src/storage/object-store/object-store';
import { ORPHAN_GRACE_MS, ORPHAN_SCAN_PAGE, StorageSweeper, SWEEP_LOCK_KEY } from '../../src/storage/sweeper/storage-sweeper';
import { createOrganization } from '../factories/organizations.factory';
import { bytes, Driver, DRIVERS, pathOf, signedUrl, storedKeys, StorageTestApp, temporaryFiles, uploadFile } from '../factories/storage.factory';
import { startS3Server } from '../support/servers/s3-server';
import { TEST_SERVICE_ROLE } from '../support/test-database';
import { eventually } from '../support/eventually';
import { createTestApp } from '../support/test-app';

/** Late enough that every object made by the test is past the orphan grace period. */
const later = () => new Date(Date.now() + ORPHAN_GRACE_MS + 60_000);

interface Deployment {
  /** The first instance: it made the database, so it closes last. */
  first: StorageTestApp;
  /** Another instance on the same database and the same object store. */
  start(): Promise<StorageTestApp>;
  close(): Promise<void>;
}

/**
 * Instances of one deployment: one database, one object store (one bucket; for the local driver, one shared
 * DATA_DIR, as instances on a shared volume). On S3 each instance keeps its own DATA_DIR, as in docker/compose.yml.
 */
async function startDeployment(driver: Driver): Promise<Deployment> {
  const s3 = driver === 's3' ? await startS3Server() : undefined;
  const sharedDataDir = driver === 'local' ? mkdtempSync(join(tmpdir(), 'flagstore-test-shared-')) : undefined;
  const env = { ...s3?.env, ...(sharedDataDir ? { DATA_DIR: sharedDataDir } : {}) };
  const open: StorageTestApp[] = [];
  const start = async (): Promise<StorageTestApp> => {
    const t = await createTestApp(env, open.length > 0 ? { sameDatabaseAs: open[0] } : {});
    // The periodic sweep would compete with the test's own calls for the lock and the marker.
    t.app.get(StorageSweeper).onApplicationShutdown();
    const instance: StorageTestApp = {
      ...t,
      driver,
      store: t.app.get<ObjectStore>(OBJECT_STORE),
      close: async () => {
        open.splice(open.indexOf(instance), 1);
        await t.close();
      },
    };
    open.push(instance);
    return instance;
  };
  const first = await start();
  return {
    first,
    start,
    close: async () => {
      for (const instance of [...open].reverse()) await instance.close();
      await s3?.close();
      if (sharedDataDir) rmSync(sharedDataDir, { recursive: true, force: true });
    },
  };
}

const sweeperOf = (t: StorageTestApp) => t.app.get(StorageSweeper);

async function storedMarker(t: StorageTestApp): Promise<string | null> {
  const { rows } = await t.db.query<{ marker: string }>(`SELECT marker FROM storage_sweep_state WHERE name = 'orphan-scan'`);
  return rows[0]?.marker ?? null;
}

/** An object without a row: what a crash between a row delete and its object delete leaves. */
async function putOrphan(t: StorageTestApp, organizationId: string): Promise<string> {
  const key = objectKeyFor(organizationId, randomUUID());
  await t.store.put(key, Readable.from([Buffer.from('orphan')]), 6);
  return key;
}

/** Makes the store's listing wait for `gate` before it lists anything. */
function gateListing(store: ObjectStore, gate: Promise<void>): void {
  const list = store.list.bind(store);
  jest.spyOn(store, 'list').mockImplementation(async function* (after?: string): AsyncIterable<StoredObject> {
    await gate;
    yield* list(after);
  });
}

async function lockIsFree(t: StorageTestApp): Promise<boolean> {
  const { rows } = await t.db.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1) AS free', [SWEEP_LOCK_KEY]);
  if (rows[0].free) await t.db.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]);
  return rows[0].free;
}

const NOTHING_SHARED = { skipped: true, expiredItems: 0, expiredNonces: 0, scannedObjects: 0, orphanObjects: 0 };

describe.each(DRIVERS)('storage sweeper (%s driver)', (driver) => {
  let deployment: Deployment;
  let t: StorageTestApp;
  beforeEach(async () => {
    deployment = await startDeployment(driver);
    t = deployment.first;
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await deployment.close();
  });

  it('lists the committed objects in key order, strictly after a given key', async () => {
    const org = await createOrganization(t);
    for (let i = 0; i < 3; i += 1) await uploadFile(t, org, bytes(10));
    for (let i = 0; i < 3; i += 1) await putOrphan(t, randomUUID());
    const keys = await storedKeys(t);
    expect(keys).toHaveLength(6);
    const listed = async (after?: string) => {
      const found: string[] = [];
      for await (const object of t.store.list(after)) found.push(object.key);
      return found;
    };
    expect(await listed()).toEqual(keys);
    for (const [index, key] of keys.entries()) expect(await listed(key)).toEqual(keys.slice(index + 1));
    // A key that is not (or no longer) in the store: the listing resumes where it would have been.
    const gone = `${keys[2].slice(0, -1)}${keys[2].endsWith('0') ? '1' : '0'}`;
    expect(await listed(gone)).toEqual(keys.filter((key) => key > gone));
  });

  describe('one instance at a time', () => {
    it('of two instances sweeping at the same moment, one sweeps and the other skips', async () => {
      const other = await deployment.start();
      const org = await createOrganization(t);
      const expired = await signedUrl(t, org, { contentType: 'image/png', size: 10 });
      await t.db.query("UPDATE storage_items SET upload_expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [expired.mediaId]);
      const orphan = await putOrphan(t, org.id);

      // Both listings wait: whichever instance takes the lock holds it until the gate opens.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      gateListing(t.store, gate);
      gateListing(other.store, gate);
      const when = later();
      const sweeps = [sweeperOf(t).sweep(when), sweeperOf(other).sweep(when)];
      // Were the lock not taken, both would wait at the gate: say so rather than time the test out.
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('both instances are sweeping'), 10_000)));
      const firstDone = await Promise.race([...sweeps, stuck]).finally(() => clearTimeout(timer));
      expect(firstDone).toEqual({ ...NOTHING_SHARED, temporaryFiles: 0 });
      open();
      const reports = await Promise.all(sweeps);

      const ran = reports.filter((report) => !report.skipped);
      expect(ran).toHaveLength(1);
      expect(ran[0]).toMatchObject({ skipped: false, expiredItems: 1, scannedObjects: 1, orphanObjects: 1 });
      expect(reports.filter((report) => report.skipped)).toEqual([firstDone]);
      expect((await t.db.query('SELECT 1 FROM storage_items WHERE id = $1', [expired.mediaId])).rowCount).toBe(0);
      expect(await storedKeys(t)).not.toContain(orphan);

      // The lock went with the run: nothing holds it, and either instance sweeps next.
      expect(await lockIsFree(t)).toBe(true);
      jest.restoreAllMocks();
      expect((await sweeperOf(other).sweep(when)).skipped).toBe(false);
      expect((await sweeperOf(t).sweep(when)).skipped).toBe(false);
    });

    it('skips while another session holds the lock, and runs once it is released or its session ends', async () => {
      const org = await createOrganization(t);
      const orphan = await putOrphan(t, org.id);
      const holder = new Client({ connectionString: t.adminDatabaseUrl });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK_KEY]);
        // Temp files are the instance's own (S3's upload spool is on its own disk): it sweeps them, lock or not.
        const tempDir = driver === 's3' ? join(t.config.dataDir, 'upload-spool') : join(t.config.dataDir, 'objects', '.tmp');
        await mkdir(tempDir, { recursive: true });
        await writeFile(join(tempDir, 'dead-upload'), 'half a file');
        const old = new Date(Date.now() - 30 * 60_000);
        await utimes(join(tempDir, 'dead-upload'), old, old);

        const skipped = await sweeperOf(t).sweep(later());
        expect(skipped).toEqual({ ...NOTHING_SHARED, temporaryFiles: 1 });
        expect(await temporaryFiles(t)).toEqual([]);
        expect(await storedKeys(t)).toContain(orphan);
        expect(await storedMarker(t)).toBeNull();

        await holder.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]);
        expect(await sweeperOf(t).sweep(later())).toMatchObject({ skipped: false, scannedObjects: 1, orphanObjects: 1 });
        expect(await storedKeys(t)).not.toContain(orphan);

        // A holder that dies without unlocking (a crashed instance) frees the lock with its session.
        await holder.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK_KEY]);
        expect((await sweeperOf(t).sweep(later())).skipped).toBe(true);
      } finally {
        await holder.end();
      }
      // The server frees a session's locks as its backend exits, just after the client has said goodbye.
      await eventually(async () => !(await sweeperOf(t).sweep(later())).skipped, { what: 'a sweep after the holder ended' });
    });
  });

  describe('the orphan scan', () => {
    it('examines one page per run, resumes after its marker, starts over at the end, and keeps objects with rows', async () => {
      const org = await createOrganization(t);
      const kept = [await uploadFile(t, org, bytes(10)), await uploadFile(t, org, bytes(10))];
      const keptKeys = kept.map((item) => objectKeyFor(org.id, item.id));
      // Orphans of a live organization, and of one that is gone altogether.
      const goneOrganization = randomUUID();
      // Put one after another: s3rver (the test's S3) answered seven PUTs at once on a busy CI machine with 500s, which
      // the client retried, and once listed 8 of the 9 objects afterwards. The scan, not concurrent PUTs, is tested here.
      const orphans: string[] = [];
      for (const owner of [org.id, org.id, org.id, org.id, goneOrganization, goneOrganization, goneOrganization]) {
        orphans.push(await putOrphan(t, owner));
      }
      const keys = await storedKeys(t);
      expect(keys).toHaveLength(9); // three pages of 3 exactly
      const page = 3;
      const orphansIn = (slice: string[]) => slice.filter((key) => orphans.includes(key));
      const sweep = () => sweeperOf(t).sweep(later(), { orphanScanPage: page });

      // Each run examines the next page and removes the orphans in it, no others.
      for (const [run, marker] of [keys[2], keys[5], null].entries()) {
        const slice = keys.slice(run * page, (run + 1) * page);
        const before = await storedKeys(t);
        const report = await sweep();
        expect(report).toMatchObject({ skipped: false, scannedObjects: page, orphanObjects: orphansIn(slice).length });
        expect(await storedKeys(t)).toEqual(before.filter((key) => !orphansIn(slice).includes(key)));
        // The last page is the end of the listing (asked one past the page): the marker goes at once.
        expect(await storedMarker(t)).toBe(marker);
      }
      expect(await storedKeys(t)).toEqual([...keptKeys].sort());

      // Round again from the start: only the files with rows are left, and they stay.
      for (let run = 0; run < 2; run += 1) {
        expect(await sweep()).toMatchObject({ skipped: false, scannedObjects: 2, orphanObjects: 0 });
        expect(await storedMarker(t)).toBeNull();
      }
      for (const item of kept) await request(t.http).get(pathOf(item.mediaUrl)).expect(200);
    });

    it('walks the whole store over several runs, young objects included, and removes old orphans as it comes to them', async () => {
      const org = await createOrganization(t);
      const kept = await Promise.all([1, 2, 3].map(() => uploadFile(t, org, bytes(10))));
      const orphans = await Promise.all(Array.from({ length: 10 }, () => putOrphan(t, org.id)));
      const keys = await storedKeys(t);
      expect(keys).toHaveLength(13);
      const sweep = (now: Date) => sweeperOf(t).sweep(now, { orphanScanPage: 4 });

      // At the real time nothing is old enough to be told from an upload about to commit its row, but the scan
      // still moves on: 4, 4, 4, then the last one and the end of the listing, then from the start again.
      const now = new Date();
      const scanned: number[] = [];
      const markers: Array<string | null> = [];
      for (let run = 0; run < 5; run += 1) {
        const report = await sweep(now);
        expect(report.orphanObjects).toBe(0);
        scanned.push(report.scannedObjects);
        markers.push(await storedMarker(t));
      }
      expect(scanned).toEqual([4, 4, 4, 1, 4]);
      expect(markers).toEqual([keys[3], keys[7], keys[11], null, keys[3]]);
      expect(await storedKeys(t)).toEqual(keys);

      // Past the grace period, the orphans go page by page from where the scan stands (after keys[3]), and those
      // before it once the scan has come round: never more than a page examined per run.
      const removed: number[] = [];
      for (let run = 0; run < 4; run += 1) {
        const report = await sweep(later());
        expect(report.scannedObjects).toBeLessThanOrEqual(4);
        removed.push(report.orphanObjects);
      }
      const orphansIn = (slice: string[]) => slice.filter((key) => orphans.includes(key)).length;
      const pages = [keys.slice(4, 8), keys.slice(8, 12), keys.slice(12), keys.slice(0, 4)];
      expect(removed).toEqual(pages.map(orphansIn));
      expect(removed.reduce((sum, count) => sum + count, 0)).toBe(orphans.length);
      expect(await storedKeys(t)).toEqual(kept.map((item) => objectKeyFor(org.id, item.id)).sort());
    });

    it('defaults to a page of ORPHAN_SCAN_PAGE objects', async () => {
      expect(ORPHAN_SCAN_PAGE).toBe(1000);
      const org = await createOrganization(t);
      await putOrphan(t, org.id);
      expect(await sweeperOf(t).sweep(later())).toMatchObject({ scannedObjects: 1, orphanObjects: 1 });
      expect(await storedMarker(t)).toBeNull();
    });

    it('keeps its marker in the database: a restarted instance, and any other, resumes from it', async () => {
      const org = await createOrganization(t);
      await Promise.all([1, 2, 3].map(() => uploadFile(t, org, bytes(10))));
      const orphans = await Promise.all(Array.from({ length: 6 }, () => putOrphan(t, org.id)));
      const keys = await storedKeys(t);
      expect(keys).toHaveLength(9);
      const sweepOn = (instance: StorageTestApp) => sweeperOf(instance).sweep(later(), { orphanScanPage: 3 });
      const orphansIn = (slice: string[]) => slice.filter((key) => orphans.includes(key));

      const second = await deployment.start();
      expect(await sweepOn(second)).toMatchObject({ scannedObjects: 3, orphanObjects: orphansIn(keys.slice(0, 3)).length });
      expect(await storedMarker(t)).toBe(keys[2]);
      await second.close();

      // A new instance (the restarted one) goes on from the second page, not from the start.
      const restarted = await deployment.start();
      expect(await sweepOn(restarted)).toMatchObject({ scannedObjects: 3, orphanObjects: orphansIn(keys.slice(3, 6)).length });
      expect(await storedMarker(t)).toBe(keys[5]);
      expect(await storedKeys(t)).toEqual(keys.filter((key) => !orphansIn(keys.slice(0, 6)).includes(key)));

      // The first instance takes the third page: the marker is the deployment's, not an instance's.
      expect(await sweepOn(t)).toMatchObject({ scannedObjects: 3, orphanObjects: orphansIn(keys.slice(6)).length });
      expect(await storedMarker(t)).toBeNull();
      expect(await storedKeys(t)).toEqual(keys.filter((key) => !orphans.includes(key)));

      // The service role may read and write the marker's table (granted after every migration), and no more.
      const { rows } = await t.db.query<{ privilege: string; held: boolean }>(
        `SELECT privilege, has_table_privilege($1, 'storage_sweep_state', privilege) AS held
         FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS privilege`,
        [TEST_SERVICE_ROLE],
      );
      expect(Object.fromEntries(rows.map((row) => [row.privilege, row.held]))).toEqual({
        SELECT: true,
        INSERT: true,
        UPDATE: true,
        DELETE: true,
        TRUNCATE: false,
        REFERENCES: false,
        TRIGGER: false,
      });
    });
  });
});
