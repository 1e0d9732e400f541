export enum Permission {
  FLAGS_READ = 'FLAGS_READ',
  FLAGS_WRITE = 'FLAGS_WRITE',
  STORAGE_READ = 'STORAGE_READ',
  STORAGE_WRITE = 'STORAGE_WRITE',
}

export const ALL_PERMISSIONS = Object.values(Permission);
