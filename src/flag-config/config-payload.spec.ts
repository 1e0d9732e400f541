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

  it('is a fixed value for a fixed input, stable across processes', () => {
    expect(configEtag([])).toBe(configEtag([]));
    expect(configEtag([])).toMatch(/^[A-Za-z0-9_-]{32}$/);
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
