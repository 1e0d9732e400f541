import { BadRequestException } from '@nestjs/common';
import { findNul, NulCharacterPipe } from './nul-character.pipe';

describe('findNul', () => {
  it('finds NUL in strings and keys at any depth, with the path', () => {
    expect(findNul('a\u0000')).toBe('');
    expect(findNul({ name: 'ok', value: { tiers: ['x', 'y\u0000'] } })).toBe('value.tiers[1]');
    expect(findNul({ value: { 'k\u0000': 1 } })).toBe('value.k\\u0000 (a key)');
  });

  it('passes everything else', () => {
    expect(findNul({ a: [1, true, null, 'text', { b: '\\u0000 escaped, not a NUL' }] })).toBeNull();
    expect(findNul(undefined)).toBeNull();
  });
});

describe('NulCharacterPipe', () => {
  const pipe = new NulCharacterPipe();

  it('names the field of a body or query argument', () => {
    expect(() => pipe.transform({ name: 'a\u0000' }, { type: 'body' })).toThrow(
      new BadRequestException('name must not contain the NUL character (\\u0000)'),
    );
    expect(() => pipe.transform('x\u0000', { type: 'param', data: 'flagId' })).toThrow(/^flagId must not contain/);
  });

  it('returns clean values untouched', () => {
    const body = { name: 'fine' };
    expect(pipe.transform(body, { type: 'body' })).toBe(body);
  });
});
