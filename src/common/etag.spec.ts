import { ifNoneMatchMatches } from './etag';

describe('ifNoneMatchMatches', () => {
  it.each([
    ['W/"abc"', true],
    ['"abc"', true],
    ['abc', true],
    ['*', true],
    ['"x", W/"abc"', true],
    ['  W/"abc"  ', true],
    ['W/"abd"', false],
    ['"ab"', false],
    ['', false],
    [undefined, false],
    ['W/abc"', false],
  ])('%p -> %p', (header, expected) => {
    expect(ifNoneMatchMatches(header, 'abc')).toBe(expected);
  });
});
