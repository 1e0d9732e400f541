export enum Permission {
  FLAGS_READ = 'FLAGS_READ',
  FLAGS_WRITE = 'FLAGS_WRITE',
  STORAGE_READ = 'STORAGE_READ',
  STORAGE_WRITE = 'STORAGE_WRITE',
  /**
   * With an organization's review required (change requests), the key may still write flags directly. Only beside
   * FLAGS_WRITE; no role has it: people go through change requests.
   */
  FLAGS_WRITE_UNREVIEWED = 'FLAGS_WRITE_UNREVIEWED',
}

export const ALL_PERMISSIONS = Object.values(Permission);

/** Permissions a key may only hold beside another: FLAGS_WRITE_UNREVIEWED widens FLAGS_WRITE, and means nothing alone. */
export const PERMISSION_REQUIRES: Readonly<Partial<Record<Permission, Permission>>> = {
  [Permission.FLAGS_WRITE_UNREVIEWED]: Permission.FLAGS_WRITE,
};

/** Why a key's permission list is refused (a message naming the field), or null when it is consistent. */
export function permissionsError(permissions: readonly Permission[]): string | null {
  for (const permission of permissions) {
    const needed = PERMISSION_REQUIRES[permission];
    if (needed !== undefined && !permissions.includes(needed)) return `permissions: ${permission} is only valid beside ${needed}`;
  }
  return null;
}
