import { open, readFile, rename, rm } from 'node:fs/promises';
import { ConfigPayload, parseConfigPayload } from './payload';

/** The last good payload from the cache file; undefined when there is none yet. A file that is not one throws. */
export async function readCacheFile(path: string): Promise<ConfigPayload | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseConfigPayload(JSON.parse(text));
}

let writes = 0;

/**
 * Replaces the cache file in one step: the payload goes to a temporary file beside it, is flushed to disk, and is
 * renamed over the old one, so a crash or a second process reading at the same moment sees either the old
 * payload or the new one, never half of one. The temporary name carries the process id, so servers on one host
 * sharing a cache file do not write into each other's temporary files.
 */
export async function writeCacheFile(path: string, payload: ConfigPayload): Promise<void> {
  writes += 1;
  const temporary = `${path}.${process.pid}.${writes}.tmp`;
  try {
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(payload), 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
