import { FlagAction, flagActionFor, FlagSnapshot } from './flag.model';

const base: FlagSnapshot = { name: 'n', description: null, type: 'json', value: { a: 1, b: 2 }, runtime: 'shared', archived: false };
const changed = (overrides: Partial<FlagSnapshot>): FlagSnapshot => ({ ...base, ...overrides });

describe('flagActionFor', () => {
  it('labels creation and deletion', () => {
    expect(flagActionFor(null, base)).toBe(FlagAction.CREATE);
    expect(flagActionFor(base, null)).toBe(FlagAction.DELETE);
  });

  it.each([
    [{ name: 'm' }, FlagAction.UPDATE],
    [{ description: 'd' }, FlagAction.UPDATE],
    [{ value: { a: 2, b: 2 } }, FlagAction.VALUE_SET],
    [{ type: 'string' as const, value: 'x' }, FlagAction.VALUE_SET],
    [{ runtime: 'server' as const }, FlagAction.RUNTIME_SET],
    [{ archived: true }, FlagAction.ARCHIVE],
  ])('labels %j', (overrides, action) => {
    expect(flagActionFor(base, changed(overrides))).toBe(action);
  });

  it('labels a restore', () => {
    expect(flagActionFor(changed({ archived: true }), base)).toBe(FlagAction.UNARCHIVE);
  });

  it('ranks runtime over value over archive over name', () => {
    expect(flagActionFor(base, changed({ runtime: 'server', value: 1, archived: true, name: 'm' }))).toBe(FlagAction.RUNTIME_SET);
    expect(flagActionFor(base, changed({ value: 1, archived: true, name: 'm' }))).toBe(FlagAction.VALUE_SET);
    expect(flagActionFor(base, changed({ archived: true, name: 'm' }))).toBe(FlagAction.ARCHIVE);
  });

  it('sees no change in a value with reordered keys, so nothing is written', () => {
    expect(flagActionFor(base, changed({ value: { b: 2, a: 1 } }))).toBeNull();
    expect(flagActionFor(base, { ...base })).toBeNull();
  });
});
