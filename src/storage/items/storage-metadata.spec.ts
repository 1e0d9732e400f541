import { parseMetadata, validateMetadata } from './storage-metadata';

describe('metadata rules', () => {
  const fail = (value: unknown) => {
    const result = validateMetadata(value);
    if (result.ok) throw new Error(`expected ${JSON.stringify(value)} to be rejected`);
    return result.message;
  };

  it('accepts string, number and boolean values within the limits', () => {
    const metadata = { level: 3, author: 'mira', public: true, 'a_b-C9': 'x'.repeat(512), ratio: -0.5 };
    expect(validateMetadata(metadata)).toEqual({ ok: true, metadata });
    expect(validateMetadata({})).toEqual({ ok: true, metadata: {} });
  });

  it('takes at most 10 keys', () => {
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    expect(validateMetadata(ten).ok).toBe(true);
    expect(fail({ ...ten, k10: 10 })).toMatch(/at most 10 keys/);
  });

  it('limits key names to 128 alphanumerics, underscores and hyphens', () => {
    expect(validateMetadata({ ['k'.repeat(128)]: 1 }).ok).toBe(true);
    expect(fail({ ['k'.repeat(129)]: 1 })).toMatch(/key names must be 1-128 characters/);
    expect(fail({ 'has space': 1 })).toMatch(/key names may only contain letters, digits, underscores and hyphens/);
    expect(fail({ 'dot.ted': 1 })).toMatch(/key names may only contain/);
    expect(fail({ ünï: 1 })).toMatch(/key names may only contain/);
    expect(fail({ '': 1 })).toMatch(/key names must be 1-128 characters/);
  });

  it('limits string values to 512 characters', () => {
    expect(fail({ note: 'x'.repeat(513) })).toMatch(/string values must be at most 512 characters \("note"\)/);
  });

  it('refuses the NUL character in string values (jsonb cannot store it)', () => {
    expect(fail({ note: 'a\u0000b' })).toMatch(/must not contain the NUL character \(\\u0000\) \("note"\)/);
  });

  it('refuses a lone UTF-16 surrogate in string values, as sent in a JSON escape, and keeps real pairs', () => {
    expect(parseMetadata('{"note":"\\ud800"}')).toEqual({
      ok: false,
      message: expect.stringMatching(/must not contain a lone UTF-16 surrogate .* \("note"\)$/),
    });
    expect(parseMetadata('{"note":"x\\udc00"}').ok).toBe(false);
    expect(parseMetadata('{"note":"\\ud83c\\udfae"}')).toEqual({ ok: true, metadata: { note: '\u{1F3AE}' } });
  });

  it('rejects values that are not string, number or boolean', () => {
    expect(fail({ nested: { a: 1 } })).toMatch(/must be a string, number or boolean \("nested"\)/);
    expect(fail({ list: [1] })).toMatch(/must be a string, number or boolean/);
    expect(fail({ nothing: null })).toMatch(/must be a string, number or boolean/);
  });

  it('limits the total to 2 KB', () => {
    // 5 keys of 500 characters: every value is fine on its own, together they pass 2048 bytes.
    const big = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'x'.repeat(500)]));
    expect(fail(big)).toMatch(/at most 2048 bytes in total/);
    // Multi-byte characters count as bytes, not characters.
    const wide = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`k${i}`, 'é'.repeat(400)]));
    expect(fail(wide)).toMatch(/at most 2048 bytes/);
  });

  it('must be a JSON-encoded object', () => {
    expect(parseMetadata('{"a":1}')).toEqual({ ok: true, metadata: { a: 1 } });
    for (const raw of ['not json', '[1,2]', 'null', '"text"', '42']) {
      const result = parseMetadata(raw);
      expect(result).toEqual({ ok: false, message: 'metadata must be a JSON-encoded object' });
    }
  });
});
