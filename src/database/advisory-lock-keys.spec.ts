import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as keys from './advisory-lock-keys';
import { STREAM_SLOT_LOCK_KEY } from './advisory-lock-keys';

describe('advisory lock keys', () => {
  it('the StreamSlots migration locks on STREAM_SLOT_LOCK_KEY (it cannot import it, so it writes the number)', () => {
    const migration = readFileSync(join(__dirname, '..', '..', 'migrations', '1795800000000-StreamSlots.ts'), 'utf8');
    const taken = [...migration.matchAll(/pg_advisory_xact_lock\(\s*(\d+)\s*,/g)].map((match) => Number(match[1]));
    expect(taken).toEqual([STREAM_SLOT_LOCK_KEY]);
  });

  it('no two rules share a one-bigint key', () => {
    // The stream slots' key is the first half of a two-integer key: another key space, which cannot collide.
    const bigintKeys = Object.entries(keys)
      .filter(([name]) => name !== 'STREAM_SLOT_LOCK_KEY')
      .map(([, key]) => key);
    expect(bigintKeys.length).toBeGreaterThanOrEqual(3);
    expect(new Set(bigintKeys).size).toBe(bigintKeys.length);
  });
});
