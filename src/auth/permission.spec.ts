import { validate } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { CreateApiKeyDto } from '../organizations/dto/organization.dto';
import { ALL_PERMISSIONS, Permission, permissionsError } from './permission';
import { ROLE_PERMISSIONS, ROLES } from './roles';

describe('permissionsError', () => {
  it('takes FLAGS_WRITE_UNREVIEWED only beside FLAGS_WRITE', () => {
    expect(permissionsError([Permission.FLAGS_WRITE, Permission.FLAGS_WRITE_UNREVIEWED])).toBeNull();
    expect(permissionsError([Permission.FLAGS_WRITE_UNREVIEWED, Permission.FLAGS_READ, Permission.FLAGS_WRITE])).toBeNull();
    expect(permissionsError([Permission.FLAGS_WRITE_UNREVIEWED])).toBe('permissions: FLAGS_WRITE_UNREVIEWED is only valid beside FLAGS_WRITE');
    expect(permissionsError([Permission.FLAGS_READ, Permission.FLAGS_WRITE_UNREVIEWED])).toMatch(/FLAGS_WRITE_UNREVIEWED.*FLAGS_WRITE/);
  });

  it('accepts every list without it, as before', () => {
    for (const permission of ALL_PERMISSIONS.filter((p) => p !== Permission.FLAGS_WRITE_UNREVIEWED))
      expect(permissionsError([permission])).toBeNull();
    expect(permissionsError([])).toBeNull();
  });

  it('is given to no role: people go through change requests', () => {
    for (const role of ROLES) expect(ROLE_PERMISSIONS[role].has(Permission.FLAGS_WRITE_UNREVIEWED)).toBe(false);
  });

  it('refuses a key body asking for it alone, naming the field', async () => {
    const errorsOf = async (permissions: unknown) =>
      (await validate(plainToInstance(CreateApiKeyDto, { name: 'ci', permissions }))).flatMap((error) => Object.values(error.constraints ?? {}));
    expect(await errorsOf(['FLAGS_WRITE_UNREVIEWED'])).toEqual(['permissions: FLAGS_WRITE_UNREVIEWED is only valid beside FLAGS_WRITE']);
    expect(await errorsOf(['FLAGS_WRITE', 'FLAGS_WRITE_UNREVIEWED'])).toEqual([]);
    expect(await errorsOf(['FLAGS_READ'])).toEqual([]);
  });
});
