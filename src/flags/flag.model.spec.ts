import { AuditAction, auditActionFor, FlagSnapshot } from './audit-action';

const base: FlagSnapshot = { name: 'n', description: null, type: 'json', value: { a: 1, b: 2 }, runtime: 'shared', archived: false };
const changed = (overrides: Partial<FlagSnapshot>): FlagSnapshot => ({ ...base, ...overrides });

describe('auditActionFor', () => {
  it('labels creation and deletion', () => {
    expect(auditActionFor(null, base)).toBe(AuditAction.CREATE);
    expect(auditActionFor(base, null)).toBe(AuditAction.DELETE);
  });

  it.each([
    [{ name: 'm' }, AuditAction.UPDATE],
    [{ description: 'd' }, AuditAction.UPDATE],
    [{ value: { a: 2, b: 2 } }, AuditAction.VALUE_SET],
    [{ type: 'string' as const, value: 'x' }, AuditAction.VALUE_SET],
    [{ runtime: 'server' as const }, AuditAction.RUNTIME_SET],
    [{ archived: true }, AuditAction.ARCHIVE],
  ])('labels %j', (overrides, action) => {
    expect(auditActionFor(base, changed(overrides))).toBe(action);
  });

  it('labels a restore', () => {
    expect(auditActionFor(changed({ archived: true }), base)).toBe(AuditAction.UNARCHIVE);
  });

  it('ranks runtime over value over archive over name', () => {
    expect(auditActionFor(base, changed({ runtime: 'server', value: 1, archived: true, name: 'm' }))).toBe(AuditAction.RUNTIME_SET);
    expect(auditActionFor(base, changed({ value: 1, archived: true, name: 'm' }))).toBe(AuditAction.VALUE_SET);
    expect(auditActionFor(base, changed({ archived: true, name: 'm' }))).toBe(AuditAction.ARCHIVE);
  });

  it('sees no change in a value with reordered keys, so nothing is written', () => {
    expect(auditActionFor(base, changed({ value: { b: 2, a: 1 } }))).toBeNull();
    expect(auditActionFor(base, { ...base })).toBeNull();
  });
});
