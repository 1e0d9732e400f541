import { Permission } from '../auth/permission';
import { Principal } from '../auth/principal';
import { mayWriteDirectly, reviewRequired } from './review-gate';
import { DEFAULT_REVIEW_SETTING } from './review-settings.repository';

const key = (...permissions: Permission[]): Principal => ({ type: 'apiKey', id: 'k', organizationId: 'o', permissions: new Set(permissions) });
const session = (role: 'viewer' | 'editor' | 'admin'): Principal => ({
  type: 'session',
  id: 'u',
  organizationId: 'o',
  role,
  sessionId: 's',
  permissions: new Set([Permission.FLAGS_READ, Permission.FLAGS_WRITE]),
});
const ON = { required: true, approvals: 1, selfApproval: false };

describe('mayWriteDirectly', () => {
  it('lets everyone through with review off (the default)', () => {
    for (const principal of [key(Permission.FLAGS_WRITE), session('editor'), session('admin'), undefined]) {
      expect(mayWriteDirectly(DEFAULT_REVIEW_SETTING, principal)).toBe(true);
    }
  });

  it('with review on, lets only a key holding FLAGS_WRITE_UNREVIEWED through', () => {
    expect(mayWriteDirectly(ON, key(Permission.FLAGS_WRITE, Permission.FLAGS_WRITE_UNREVIEWED))).toBe(true);
    expect(mayWriteDirectly(ON, key(Permission.FLAGS_WRITE))).toBe(false);
    expect(mayWriteDirectly(ON, session('admin'))).toBe(false);
    expect(mayWriteDirectly(ON, session('editor'))).toBe(false);
    expect(mayWriteDirectly(ON, undefined)).toBe(false);
    // A session never counts as such a key, whatever its permissions say.
    const odd: Principal = {
      ...(session('admin') as Extract<Principal, { type: 'session' }>),
      permissions: new Set([Permission.FLAGS_WRITE_UNREVIEWED]),
    };
    expect(mayWriteDirectly(ON, odd)).toBe(false);
  });

  it('answers 403 REVIEW_REQUIRED naming the way through', () => {
    const error = reviewRequired();
    expect({ status: error.status, code: error.code }).toEqual({ status: 403, code: 'REVIEW_REQUIRED' });
    expect(error.message).toMatch(/POST \/v1\/change-requests/);
    expect(error.responseDetails).toEqual({ code: 'REVIEW_REQUIRED' });
  });
});
