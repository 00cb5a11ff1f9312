/** The recycle-bin domain's only door: what other domains and the app composition use. */
export { default as recycleBinPlugin } from './plugin.ts';
export { createRecycleBinPurge } from './recycle-bin-purge.ts';
export type { RecycleBinPurge } from './recycle-bin-purge.ts';
export { storageLocation } from './recycle-bin-entry.ts';
export { default as recycleBinRoutes } from './routes.ts';
export { createUserRecycler } from './user-recycle.ts';
export { MISSING_DISK_DETAIL } from './restore-disks.ts';
