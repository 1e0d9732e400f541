import { DomainError } from '../common/domain-error';
import { flagETag, ifMatchHolds, parseIfMatch } from './flag-version';

describe("a flag's version and If-Match (RFC 9110 13.1.1)", () => {
  it('is a strong, quoted ETag', () => {
    expect(flagETag(3)).toBe('"3"');
  });

  it('holds without a header, for *, and for a list naming the version; never for a weak tag', () => {
    expect(ifMatchHolds(parseIfMatch(undefined), 3)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('*'), 3)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('"3"'), 3)).toBe(true);
    expect(ifMatchHolds(parseIfMatch(' "1" , "3",'), 3)).toBe(true);
    expect(ifMatchHolds(parseIfMatch(['"1"', '"3"']), 3)).toBe(true);
    expect(ifMatchHolds(parseIfMatch('"2"'), 3)).toBe(false);
    expect(ifMatchHolds(parseIfMatch('W/"3"'), 3)).toBe(false);
  });

  it.each([['3'], ['"3'], ['"3" x'], ['abc, "3"'], [''], [' , '], ['W/3'], ['"a b"']])('refuses %j with a 400 naming If-Match', (header) => {
    let error: unknown;
    try {
      parseIfMatch(header);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', message: expect.stringMatching(/^If-Match must be \*/) });
  });
});
