import { diff, same, shown } from './diff';

describe("the console's diff of a flag's states", () => {
  const base = { name: 'Double XP', description: null, type: 'boolean', value: false, runtime: 'shared', archived: false };

  it('names each changed field, and nothing else', () => {
    expect(diff(base, { ...base, value: true, name: 'Double XP weekend' })).toEqual([
      { path: 'name', kind: 'changed', before: 'Double XP', after: 'Double XP weekend' },
      { path: 'value', kind: 'changed', before: false, after: true },
    ]);
    expect(diff(base, { ...base })).toEqual([]);
  });

  it('goes into JSON values, and into arrays of the same length item by item', () => {
    const before = { ...base, type: 'json', value: { tiers: [1, 2, 3], rare: { chance: 0.1 } } };
    const after = { ...base, type: 'json', value: { tiers: [1, 5, 3], rare: { chance: 0.2, cap: 3 } } };
    expect(diff(before, after)).toEqual([
      { path: 'value.rare.cap', kind: 'added', after: 3 },
      { path: 'value.rare.chance', kind: 'changed', before: 0.1, after: 0.2 },
      { path: 'value.tiers[1]', kind: 'changed', before: 2, after: 5 },
    ]);
  });

  it('treats an array whose length changed as one change', () => {
    expect(diff({ value: [1, 2] }, { value: [2] })).toEqual([{ path: 'value', kind: 'changed', before: [1, 2], after: [2] }]);
  });

  it('shows rules added and removed', () => {
    const rules = [{ id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu'] }], value: true }];
    expect(diff(base, { ...base, rules })).toEqual([{ path: 'rules', kind: 'added', after: rules }]);
    expect(diff({ ...base, rules }, base)).toEqual([{ path: 'rules', kind: 'removed', before: rules }]);
  });

  it('compares JSON whatever the order of keys', () => {
    expect(same({ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(true);
    expect(same([1, 2], [2, 1])).toBe(false);
    expect(same(null, {})).toBe(false);
  });

  it('a whole value that changed type is one change at its path', () => {
    expect(diff({ value: { a: 1 } }, { value: 'text' })).toEqual([{ path: 'value', kind: 'changed', before: { a: 1 }, after: 'text' }]);
    expect(diff(1, 2)).toEqual([{ path: '(value)', kind: 'changed', before: 1, after: 2 }]);
  });

  it('shows values as short JSON', () => {
    expect(shown(undefined)).toBe('(none)');
    expect(shown('x'.repeat(300))).toHaveLength(200);
  });
});
