import { reproposed } from './refresh';

describe("a stale change request's refresh", () => {
  const base = { name: 'Event banner', description: null, type: 'string', value: 'none', runtime: 'shared', archived: false };
  const rule = { id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu'] }], value: 'eu' };

  it("keeps the request's own changes and takes every other field from the flag as it is now", () => {
    const after = { ...base, value: 'halloween' };
    const current = { ...base, name: 'Event banner text', runtime: 'server' };
    expect(reproposed(base, after, current)).toEqual({ ...base, name: 'Event banner text', runtime: 'server', value: 'halloween' });
  });

  it('keeps rules added since, unless the request changes the rules itself', () => {
    expect(reproposed(base, { ...base, value: 'x' }, { ...base, rules: [rule] })).toEqual({ ...base, value: 'x', rules: [rule] });
    expect(reproposed({ ...base, rules: [rule] }, base, { ...base, rules: [rule], name: 'New' })).toEqual({ ...base, name: 'New' });
  });

  it('wins over a colleague on a field both changed (the request is reviewed again)', () => {
    expect(reproposed(base, { ...base, value: 'mine' }, { ...base, value: 'theirs' })).toEqual({ ...base, value: 'mine' });
  });
});
