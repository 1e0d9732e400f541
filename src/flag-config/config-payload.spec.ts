import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { buildConfigPayload, configEtag, POLL_INTERVAL_SECONDS } from './config-payload';

const flags = [
  { key: 'a', type: 'json' as const, value: { x: 1, y: [1, 2] }, runtime: 'server' as const },
  { key: 'b', type: 'boolean' as const, value: true, runtime: 'shared' as const },
];

describe('configEtag', () => {
  it('depends on the flags only, not on when the payload was built', () => {
    const early = buildConfigPayload(flags, new Date('2026-01-01T00:00:00Z'));
    const late = buildConfigPayload(flags, new Date('2027-06-01T00:00:00Z'));
    expect(early.etag).toBe(late.etag);
    expect(early.body.equals(late.body)).toBe(false);
  });

  it('ignores the key order inside JSON values', () => {
    const reordered = [{ ...flags[0], value: { y: [1, 2], x: 1 } }, flags[1]];
    expect(configEtag(reordered)).toBe(configEtag(flags));
  });

  it('changes with any value, runtime, type, key or membership change', () => {
    const etag = configEtag(flags);
    expect(configEtag([flags[0], { ...flags[1], value: false }])).not.toBe(etag);
    expect(configEtag([flags[0], { ...flags[1], runtime: 'server' }])).not.toBe(etag);
    expect(configEtag([flags[0], { ...flags[1], type: 'json' }])).not.toBe(etag);
    expect(configEtag([flags[0], { ...flags[1], key: 'c' }])).not.toBe(etag);
    expect(configEtag([flags[0]])).not.toBe(etag);
  });

  it('is a fixed value for a fixed input: the first 32 base64url characters of the SHA-256 of the canonical JSON', () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);
    expect(configEtag([])).toBe('T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqH');
    expect(configEtag([])).toBe(sha256('[]'));
    expect(configEtag(flags)).toBe(
      sha256(
        '[{"key":"a","runtime":"server","type":"json","value":{"x":1,"y":[1,2]}},' + '{"key":"b","runtime":"shared","type":"boolean","value":true}]',
      ),
    );
  });

  it('is the same in another process (another instance, or after a restart)', () => {
    // A second Node process computes the ETags of the same inputs; anything process-specific (pid, start
    // time, a random seed) would make them differ.
    const script =
      `const { configEtag } = require(${JSON.stringify(resolve(__dirname, 'config-payload'))});` +
      `process.stdout.write(JSON.stringify([configEtag([]), configEtag(JSON.parse(process.argv[1]))]));`;
    const output = execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script, JSON.stringify(flags)], {
      cwd: resolve(__dirname, '../..'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(output)).toEqual([configEtag([]), configEtag(flags)]);
  });
});

describe('buildConfigPayload', () => {
  it('serialises the body once with the weak ETag header', () => {
    const payload = buildConfigPayload(flags, new Date('2026-11-22T10:00:00.000Z'));
    expect(payload.etagHeader).toBe(`W/"${payload.etag}"`);
    expect(JSON.parse(payload.body.toString())).toEqual({
      etag: payload.etag,
      generatedAt: '2026-11-22T10:00:00.000Z',
      pollIntervalSeconds: POLL_INTERVAL_SECONDS,
      flags,
    });
  });
});
