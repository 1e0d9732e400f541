import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalObjectStore } from './local-object-store';

describe('LocalObjectStore.list(after)', () => {
  let root: string;
  let store: LocalObjectStore;

  // Folder names chosen so that name order and key order disagree: "a" < "a-b", but "a-b/..." < "a/..."
  // ('-' is 0x2d, '/' is 0x2f). S3 lists by key, so the local driver must too.
  const keys = ['a-b/1', 'a-b/2', 'a/1', 'a/10', 'a/2', 'b/x', 'c/y', 'c/z'];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'flagstore-local-list-'));
    store = new LocalObjectStore(root);
    await store.init(); // makes .tmp, which is never listed
    await writeFile(join(root, '.tmp', 'half-an-upload'), 'x');
    // Created out of order: the listing order must not depend on the directory's.
    for (const key of [...keys].reverse()) {
      const [organization] = key.split('/');
      await mkdir(join(root, organization), { recursive: true });
      await writeFile(join(root, key), key);
    }
    await mkdir(join(root, 'empty'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const listed = async (after?: string) => {
    const found: string[] = [];
    for await (const object of store.list(after)) {
      // fs's Dates come from another realm than jest's, so no toBeInstanceOf(Date).
      expect(Number.isFinite(object.lastModified.getTime())).toBe(true);
      found.push(object.key);
    }
    return found;
  };

  it('lists every committed object in ascending key order, temp files left out', async () => {
    expect(await listed()).toEqual(keys);
    expect([...keys].sort()).toEqual(keys);
  });

  it('resumes strictly after any listed key', async () => {
    for (const [index, key] of keys.entries()) {
      expect(await listed(key)).toEqual(keys.slice(index + 1));
    }
  });

  it('resumes after a key that is no longer there, or that falls between folders', async () => {
    expect(await listed('a/0')).toEqual(['a/1', 'a/10', 'a/2', 'b/x', 'c/y', 'c/z']);
    expect(await listed('a/3')).toEqual(['b/x', 'c/y', 'c/z']);
    expect(await listed('a-b/')).toEqual(keys);
    expect(await listed('a-a')).toEqual(keys);
    expect(await listed('a')).toEqual(keys);
    expect(await listed('bb')).toEqual(['c/y', 'c/z']);
    expect(await listed('c/z')).toEqual([]);
    expect(await listed('d')).toEqual([]);
  });

  it('lets a consumer stop early', async () => {
    const found: string[] = [];
    for await (const object of store.list('a/1')) {
      found.push(object.key);
      if (found.length === 2) break;
    }
    expect(found).toEqual(['a/10', 'a/2']);
  });
});
