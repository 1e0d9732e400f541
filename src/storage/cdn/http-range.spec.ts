import { decideRange, ifRangeAllowsRange } from './http-range';

describe('decideRange', () => {
  it.each([
    ['bytes=0-9', { kind: 'partial', range: { start: 0, end: 9 } }],
    ['bytes=90-', { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-10', { kind: 'partial', range: { start: 90, end: 99 } }],
    ['bytes=-1000', { kind: 'partial', range: { start: 0, end: 99 } }],
    ['bytes=50-5000', { kind: 'partial', range: { start: 50, end: 99 } }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=9-1', { kind: 'full' }],
    ['bytes=0-1,5-6', { kind: 'full' }],
    ['items=0-1', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
  ])('%s of 100 bytes', (header, decision) => {
    expect(decideRange(header, 100)).toEqual(decision);
  });

  it('serves an empty file whole', () => {
    expect(decideRange('bytes=0-0', 0)).toEqual({ kind: 'full' });
  });
});

describe('conditional headers', () => {
  const etag = '"abc"';
  it('If-Range needs a strong match', () => {
    expect(ifRangeAllowsRange(undefined, etag)).toBe(true);
    expect(ifRangeAllowsRange('"abc"', etag)).toBe(true);
    expect(ifRangeAllowsRange('W/"abc"', etag)).toBe(false);
    expect(ifRangeAllowsRange('Wed, 21 Oct 2015 07:28:00 GMT', etag)).toBe(false);
  });
});
