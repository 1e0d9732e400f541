import { flagValueError, MAX_VALUE_BYTES } from './flag-value';

describe('flagValueError', () => {
  it.each([
    ['boolean', true],
    ['boolean', false],
    ['number', 0],
    ['number', -1.5e10],
    ['string', ''],
    ['json', null],
    ['json', 'text'],
    ['json', [1, [2, [3, [4]]]]],
    ['json', { a: { b: { c: { d: 'four levels' } } } }],
  ])('accepts a %s value %j', (type, value) => {
    expect(flagValueError(type, value)).toBeNull();
  });

  it.each([
    ['boolean', 'true', 'value must be a boolean (true or false) when type is boolean'],
    ['boolean', 0, 'value must be a boolean (true or false) when type is boolean'],
    ['number', '1', 'value must be a finite number when type is number'],
    ['number', Number.POSITIVE_INFINITY, 'value must be a finite number when type is number'],
    ['number', Number.NaN, 'value must be a finite number when type is number'],
    ['string', null, 'value must be a string when type is string'],
    ['string', 5, 'value must be a string when type is string'],
    ['json', undefined, 'value is required'],
  ])('rejects a %s value %p', (type, value, message) => {
    expect(flagValueError(type, value)).toBe(message);
  });

  it('limits the serialized size to 4 KB, counting UTF-8 bytes', () => {
    // JSON.stringify adds two quotes.
    expect(flagValueError('string', 'x'.repeat(MAX_VALUE_BYTES - 2))).toBeNull();
    expect(flagValueError('string', 'x'.repeat(MAX_VALUE_BYTES - 1))).toMatch(/at most 4096 bytes/);
    expect(flagValueError('string', 'é'.repeat(2100))).toMatch(/at most 4096 bytes when serialized \(got 4202\)/);
  });

  it('limits nesting to 4 levels of objects and arrays', () => {
    expect(flagValueError('json', { a: { b: { c: { d: { e: 1 } } } } })).toBe('value must nest at most 4 levels deep');
    expect(flagValueError('json', [[[[[1]]]]])).toBe('value must nest at most 4 levels deep');
    expect(flagValueError('json', [[[[1]]]])).toBeNull();
  });

  it('leaves an unknown type to the type field', () => {
    expect(flagValueError('date', 'x')).toBeNull();
  });
});
