import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { assertObjectKey, ByteRange, ObjectStore, StoredObject } from './object-store';
import { writeNewFile } from './write-file';

const TMP_DIR = '.tmp';
// Large files move in 1 MiB chunks: a sixteenth of the syscalls and socket writes of the 64 KiB default.
const IO_CHUNK_BYTES = 1024 * 1024;

/**
 * Files under `<dataDir>/objects/<organizationId>/<itemId>`. A write goes to `.tmp/<random>` in the same
 * directory tree, is fsynced, then renamed into place: rename is atomic on one filesystem, so a reader or a
 * crash sees the whole file or none of it. Leftover temp files are removed by the sweeper.
 */
export class LocalObjectStore implements ObjectStore {
  private readonly tmpDir: string;

  constructor(private readonly root: string) {
    this.tmpDir = join(root, TMP_DIR);
  }

  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
  }

  /** Usable while its directory is writable. */
  async checkUsable(): Promise<void> {
    await access(this.root, constants.W_OK);
  }

  async put(key: string, body: Readable): Promise<void> {
    const path = this.pathOf(key);
    const tmp = join(this.tmpDir, randomUUID());
    try {
      // flush: fsync before close, so the rename never publishes a file whose bytes are not on disk.
      await writeNewFile(body, tmp, { flush: true, highWaterMark: IO_CHUNK_BYTES });
      await mkdir(dirname(path), { recursive: true });
      await rename(tmp, path);
    } catch (error) {
      await unlinkIfPresent(tmp);
      throw error;
    }
    await fsyncDirectory(dirname(path));
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    // The open handle keeps the bytes readable even if the file is deleted while it streams.
    return handle.createReadStream({ highWaterMark: IO_CHUNK_BYTES, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async delete(key: string): Promise<void> {
    await unlinkIfPresent(this.pathOf(key));
  }

  /**
   * Keys in the order S3 lists them: organization folders sorted by `<organization>/` (so that a folder whose
   * name is a prefix of another's comes in key order, not name order), then the items of each, sorted. With
   * `after`, folders whose keys all sort before it are not read at all.
   */
  async *list(after?: string): AsyncIterable<StoredObject> {
    const prefixes = (await readdirIfPresent(this.root))
      .filter((organization) => organization !== TMP_DIR)
      .map((organization) => `${organization}/`)
      .sort();
    for (const prefix of prefixes) {
      if (after !== undefined && prefix < after && !after.startsWith(prefix)) continue;
      for (const item of (await readdirIfPresent(join(this.root, prefix))).sort()) {
        const key = `${prefix}${item}`;
        if (after !== undefined && key <= after) continue;
        try {
          const info = await stat(join(this.root, prefix, item));
          yield { key, lastModified: info.mtime };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
    }
  }

  async sweepTemporary(before: Date): Promise<number> {
    let removed = 0;
    for (const name of await readdirIfPresent(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      try {
        // A live upload writes continuously, so its temp file's mtime stays recent.
        if ((await stat(path)).mtime < before) {
          await unlinkIfPresent(path);
          removed += 1;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return removed;
  }

  private pathOf(key: string): string {
    assertObjectKey(key);
    return join(this.root, key);
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

async function readdirIfPresent(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Makes the rename itself durable. */
async function fsyncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
