import { BadRequestException } from '@nestjs/common';
import { findRawInputProblem, MAX_INPUT_DEPTH, RawInputPipe } from './raw-input.pipe';

describe('findRawInputProblem', () => {
  it('finds NUL in strings and keys at any depth, with the path', () => {
    expect(findRawInputProblem({ name: 'a\u0000' })).toBe('name must not contain the NUL character (\\u0000)');
    expect(findRawInputProblem({ name: 'ok', value: { tiers: ['x', 'y\u0000'] } })).toBe(
      'value.tiers[1] must not contain the NUL character (\\u0000)',
    );
    expect(findRawInputProblem({ value: { 'k\u0000': 1 } })).toBe('value.k\\u0000 (a key) must not contain the NUL character (\\u0000)');
  });

  it('finds lone UTF-16 surrogates in strings and keys, and lets surrogate pairs through', () => {
    expect(findRawInputProblem({ name: 'a\ud800' })).toBe(
      'name must not contain a lone UTF-16 surrogate (\\ud800-\\udfff), which is not valid Unicode',
    );
    expect(findRawInputProblem({ value: ['\udfffx'] })).toMatch(/^value\[0\] must not contain a lone UTF-16 surrogate/);
    expect(findRawInputProblem({ value: { ['k\udbff']: 1 } })).toMatch(/^value\.k\\udbff \(a key\) must not contain a lone UTF-16 surrogate/);
    expect(findRawInputProblem({ name: '\ud83c\udfae pad', value: { '\u{1F3AE}': '\u{1F3AE}' } })).toBeNull();
  });

  it(`refuses nesting deeper than ${MAX_INPUT_DEPTH} levels`, () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 1;
      for (let level = 0; level < levels; level += 1) value = [value];
      return value;
    };
    expect(findRawInputProblem({ value: nest(MAX_INPUT_DEPTH - 1) })).toBeNull();
    expect(findRawInputProblem({ value: nest(MAX_INPUT_DEPTH) })).toMatch(/^value(\[0\])+ nests deeper than 32 levels$/);
    expect(findRawInputProblem({ value: nest(100_000) })).toMatch(/nests deeper than 32 levels$/);
  });

  it('passes everything else', () => {
    expect(findRawInputProblem({ a: [1, true, null, 'text', { b: '\\u0000 escaped, not a NUL' }] })).toBeNull();
    expect(findRawInputProblem(undefined)).toBeNull();
  });
});

describe('RawInputPipe', () => {
  const pipe = new RawInputPipe();

  it('names the field of a body, query or path argument', () => {
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
