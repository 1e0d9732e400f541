import { Permission } from './permission';

/** A member's role in an organization (README, "People and sessions"). */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What each role may do with flags and files; admins also manage the organization's members, invitations and API keys. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  viewer: new Set([Permission.FLAGS_READ, Permission.STORAGE_READ]),
  editor: new Set([Permission.FLAGS_READ, Permission.FLAGS_WRITE, Permission.STORAGE_READ, Permission.STORAGE_WRITE]),
  admin: new Set([Permission.FLAGS_READ, Permission.FLAGS_WRITE, Permission.STORAGE_READ, Permission.STORAGE_WRITE]),
};

/** Whether `role` is at least `needed` (viewer < editor < admin). */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}
