import { containsPattern } from './like-pattern';

describe('containsPattern', () => {
  it('wraps the text in wildcards', () => {
    expect(containsPattern('acme')).toBe('%acme%');
  });

  it('escapes the wildcards and the escape character, so that they match themselves', () => {
    expect(containsPattern('50%_off')).toBe('%50\\%\\_off%');
    expect(containsPattern('a\\b')).toBe('%a\\\\b%');
  });
});
