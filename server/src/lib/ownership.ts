/**
 * Ownership predicates (reference server-resources 0.4). Small named functions, one per object
 * kind, used by every route that takes an id: unknown id → 404, somebody else's → 403.
 */
import { ApiError } from './api-error.ts';
import type { Caller } from './auth-context.ts';

export type { Caller };

interface Owned {
  userId: string;
  categoryId: string;
}

/** ownsDomainId: admin; the owner; a manager of the desktop's category. */
export function canManageDesktop(auth: Caller, desktop: Owned): boolean {
  return (
    auth.role === 'admin' ||
    desktop.userId === auth.userId ||
    (auth.role === 'manager' && desktop.categoryId === auth.categoryId)
  );
}

/** Throws 404 for a missing desktop and 403 for one the caller may not manage; returns it otherwise. */
export function assertDesktopAccess<T extends Owned>(auth: Caller, desktop: T | undefined): T {
  if (!desktop) throw new ApiError('not_found', 'Desktop not found', 'not_found');
  if (!canManageDesktop(auth, desktop))
    throw new ApiError('forbidden', 'Not enough rights on this desktop', 'forbidden');
  return desktop;
}

type AllowedLists = Partial<Record<'roles' | 'categories' | 'groups' | 'users', false | string[]>>;

/** An item shared through allowed lists (templates, media). */
export interface Shared extends Owned {
  allowed: unknown;
}

/**
 * "allowed" semantics of reference 0.5: the owner, admins and managers of the item's category
 * always pass; otherwise any list that is `[]` (everyone; same category for groups and users) or
 * that names the caller's role, category, group or id lets the caller in. `false` lists don't apply.
 */
export function isAllowed(auth: Caller & { groupId: string }, item: Shared): boolean {
  if (
    auth.role === 'admin' ||
    item.userId === auth.userId ||
    (auth.role === 'manager' && item.categoryId === auth.categoryId)
  )
    return true;
  const allowed = (item.allowed ?? {}) as AllowedLists;
  const dims: [false | string[] | undefined, string, boolean][] = [
    [allowed.roles, auth.role, false],
    [allowed.categories, auth.categoryId, false],
    [allowed.groups, auth.groupId, true],
    [allowed.users, auth.userId, true],
  ];
  for (const [list, value, sameCategory] of dims) {
    if (list === undefined || list === false) continue;
    if (
      list.length === 0
        ? !sameCategory || item.categoryId === auth.categoryId
        : list.includes(value)
    )
      return true;
  }
  return false;
}
