/**
 * A write that fails because the filesystem is full (ENOSPC) or the quota of its owner is used up
 * (EDQUOT) is the server's storage running out, not a bug: the answer is 507 insufficient_storage
 * in our error shape, and whatever the request began to write is removed by its caller.
 */
import { ApiError } from '../http/api-error.ts';

const FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/** Whether `err` says the filesystem (or the quota) has no room left. */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && FULL_CODES.has(code);
}

/** 507: the server's storage is full. */
export function storageFullError(): ApiError {
  return new ApiError(
    'insufficient_storage',
    'The server has no storage space left; try again later',
    'storage_full',
  );
}
