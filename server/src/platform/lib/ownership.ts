/**
 * Ownership predicates: small named functions, one per object kind, used by every route that takes
 * an id (unknown id → 404, somebody else's → 403).
 *
 * Who acts on a desktop: an admin, on any desktop; the owner, on their own; a manager, on the
 * desktops of their own category whose owner is not an admin. A manager never acts on an admin's
 * items (in any category) nor outside their category; the desktops of the other managers of the
 * category stay theirs to manage, since a category is administered by all of its managers alike.
 */
import { ApiError } from '../http/api-error.ts';
import type { Caller } from '../auth/auth-context.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

export type { Caller };

/** An item with an owner and a category. */
interface Scoped {
  userId: string;
  categoryId: string;
}

/** A desktop as the desktops repository reads it: with its owner's current role. */
export interface OwnedDesktop extends Scoped {
  ownerRole: Role;
}

/** True when the caller is a manager who may act on the items of this owner (see above). */
export function managesOwner(auth: Caller, owner: { categoryId: string; role: Role }): boolean {
  return (
    auth.role === role.manager &&
    owner.categoryId === auth.categoryId &&
    !hasRoleAtLeast(owner.role, role.admin)
  );
}

/** Whether the caller may act on the desktop: admin, owner, or a manager who manages its owner. */
export function canManageDesktop(auth: Caller, desktop: OwnedDesktop): boolean {
  return (
    hasRoleAtLeast(auth.role, role.admin) ||
    desktop.userId === auth.userId ||
    managesOwner(auth, { categoryId: desktop.categoryId, role: desktop.ownerRole })
  );
}

/** Throws 404 for a missing desktop and 403 for one the caller may not manage; returns it otherwise. */
export function assertDesktopAccess<T extends OwnedDesktop>(
  auth: Caller,
  desktop: T | undefined,
): T {
  if (!desktop) throw new ApiError('not_found', 'Desktop not found', 'not_found');
  if (!canManageDesktop(auth, desktop))
    throw new ApiError('forbidden', 'Not enough rights on this desktop', 'forbidden');
  return desktop;
}

/**
 * Whether the caller may manage a shared item (edit it, share it, delete it): an admin, its owner,
 * or a manager who manages its owner (same category, owner not an admin). An item whose owner is
 * gone (`ownerRole` null) is left to admins.
 */
export function canManageItem(auth: Caller, item: Scoped & { ownerRole: Role | null }): boolean {
  return (
    hasRoleAtLeast(auth.role, role.admin) ||
    item.userId === auth.userId ||
    (item.ownerRole !== null &&
      managesOwner(auth, { categoryId: item.categoryId, role: item.ownerRole }))
  );
}

type AllowedLists = Partial<Record<'roles' | 'categories' | 'groups' | 'users', false | string[]>>;

/** An item shared through allowed lists (templates, media), with its owner's current role. */
export interface Shared extends Scoped {
  allowed: unknown;
  /** null: the owner is gone. */
  ownerRole: Role | null;
}

/**
 * "allowed" semantics: the owner, admins and the managers who manage the item's owner (same
 * category, owner not an admin: an admin's item in a manager's category is not the manager's to
 * use) always pass (unless `listsOnly`, where only the lists count: what was shared with the caller);
 * otherwise any list that is `[]` (everyone; same category for groups and users) or that names the
 * caller's role, category, group or id lets the caller in. `false` lists don't apply.
 */
export function isAllowed(
  auth: Caller & { groupId: string },
  item: Shared,
  options: { listsOnly?: boolean } = {},
): boolean {
  if (
    !options.listsOnly &&
    (hasRoleAtLeast(auth.role, role.admin) ||
      item.userId === auth.userId ||
      (item.ownerRole !== null &&
        managesOwner(auth, { categoryId: item.categoryId, role: item.ownerRole })))
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
