import { OwnOrganizationsErrorCode, OwnOrganizationsErrors } from './own-organizations.errors';

describe('what a refused create or delete of an organization says', () => {
  it('names what is left in a non-empty organization, in the singular or plural', () => {
    expect(OwnOrganizationsErrors.notEmpty(1, 0).message).toMatch(/^Not deleted: the organization still has 1 flag\. /);
    expect(OwnOrganizationsErrors.notEmpty(0, 1).message).toMatch(/still has 1 file\. /);
    expect(OwnOrganizationsErrors.notEmpty(3, 2).message).toMatch(/still has 3 flags and 2 files\. /);
    expect(OwnOrganizationsErrors.notEmpty(3, 2).status).toBe(409);
  });

  it('says which setting refused a create, and the limit', () => {
    const off = OwnOrganizationsErrors.refused(OwnOrganizationsErrorCode.ORGANIZATION_CREATION_OFF, 20);
    expect([off.status, off.code]).toEqual([403, 'ORGANIZATION_CREATION_OFF']);
    expect(off.message).toMatch(/ORGANIZATION_CREATION=off/);
    expect(OwnOrganizationsErrors.refused(OwnOrganizationsErrorCode.ORGANIZATION_CREATION_ADMINS_ONLY, 20).message).toMatch(/admin/);
    expect(OwnOrganizationsErrors.refused(OwnOrganizationsErrorCode.ORGANIZATION_LIMIT, 7).message).toMatch(/created 7 organizations/);
  });
});
