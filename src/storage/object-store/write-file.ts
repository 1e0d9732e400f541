import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Streams `body` into a new file (mode 0600; `wx`: never over an existing one). Rejects only once the file
 * is closed: a body that fails early (an upload refused at its first bytes) rejects the pipeline while the
 * write stream may still be opening the file, and the caller's unlink would then run before the file
 * exists and leave it behind.
 */
export async function writeNewFile(body: Readable, path: string, options: { highWaterMark?: number; flush?: boolean } = {}): Promise<void> {
  const file = createWriteStream(path, { flags: 'wx', mode: 0o600, ...options });
  try {
    await pipeline(body, file);
  } catch (error) {
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    throw error;
  }
}
