/**
 * Ownership predicates (reference server-resources 0.4). Small named functions, one per object
 * kind, used by every route that takes an id: unknown id → 404, somebody else's → 403.
 */
import { ApiError } from './api-error.ts';
import type { AuthContext } from '../plugins/app/auth.ts';

interface Owned {
  userId: string;
  categoryId: string;
}

export type Caller = Pick<AuthContext, 'userId' | 'role' | 'categoryId'>;

/** ownsDomainId: admin; the owner; a manager of the desktop's category. */
export function canManageDesktop(auth: Caller, desktop: Owned): boolean {
  return auth.role === 'admin' || desktop.userId === auth.userId || (auth.role === 'manager' && desktop.categoryId === auth.categoryId);
}

/** Throws 404 for a missing desktop and 403 for one the caller may not manage; returns it otherwise. */
export function assertDesktopAccess<T extends Owned>(auth: Caller, desktop: T | undefined): T {
  if (!desktop) throw new ApiError('not_found', 'Desktop not found', 'not_found');
  if (!canManageDesktop(auth, desktop)) throw new ApiError('forbidden', 'Not enough rights on this desktop', 'forbidden');
  return desktop;
}
