/**
 * The allowed lists of a shared item that names who may use it (a GPU profile, a booking rule, a
 * network): `{ roles, categories, groups, users }`, each false (not used), [] (everyone) or a list
 * of ids; as the forms show them (the roles as a list, every role = everyone) and as they are
 * stored; the check of the users and groups they name; and whether they let a caller use the item.
 */
import type { Allowed, AllowedShareLists2, Role } from '../../../../src/generated/types.ts';
import { role, roles as ALL_ROLES } from '../../../../src/generated/policy.ts';
import { ApiError } from '../http/api-error.ts';

/** The directory's lookups the allowed lists are checked against. */
export interface Directory {
  groupsByIds(ids: readonly string[]): Promise<{ id: string }[]>;
  usersByIds(ids: readonly string[]): Promise<{ id: string }[]>;
}

/** Every group and user the allowed lists name exists (404 `not_found` on the first that does not). */
export async function checkLists(
  directory: Directory,
  lists: { groups?: string[] | false; users?: string[] | false } | undefined,
): Promise<void> {
  const unknown = (id: string, path: string) =>
    new ApiError(
      'not_found',
      `Unknown ${id}`,
      'not_found',
      { id },
      { errors: { [path]: 'not_found' } },
    );
  const groups = lists?.groups || [];
  const users = lists?.users || [];
  if (groups.length > 0) {
    const found = new Set((await directory.groupsByIds(groups)).map((g) => g.id));
    groups.forEach((id, i) => {
      if (!found.has(id)) throw unknown(id, `/allowed/groups/${i}`);
    });
  }
  if (users.length > 0) {
    const found = new Set((await directory.usersByIds(users)).map((u) => u.id));
    users.forEach((id, i) => {
      if (!found.has(id)) throw unknown(id, `/allowed/users/${i}`);
    });
  }
}

/** The stored roles list as the form shows it: [] (everyone) lists every role, false none. */
export function rolesOf(allowed: Allowed): Role[] {
  const roles = allowed.roles;
  if (roles === undefined || roles === false) return [];
  if (roles.length === 0) return [...ALL_ROLES];
  return ALL_ROLES.filter((r) => roles.includes(r));
}

/**
 * The stored allowed object from the form's roles and users/groups lists: every role listed is
 * stored as [] (everyone), none as false; categories keep what they were (false when new).
 */
export function allowedFrom(
  previous: Allowed,
  roles: readonly Role[] | undefined,
  lists: AllowedShareLists2 | undefined,
): Allowed {
  const next: Allowed = {
    roles: previous.roles ?? false,
    categories: previous.categories ?? false,
    groups: previous.groups ?? false,
    users: previous.users ?? false,
  };
  if (roles !== undefined) {
    const set = new Set(roles);
    next.roles =
      set.size === 0
        ? false
        : ALL_ROLES.every((r) => set.has(r))
          ? []
          : [...ALL_ROLES].filter((r) => set.has(r));
  }
  if (lists?.groups !== undefined) next.groups = lists.groups;
  if (lists?.users !== undefined) next.users = lists.users;
  return next;
}

/** Who asks whether the lists let them use an item. */
export interface ListsCaller {
  userId: string;
  role: string;
  categoryId: string;
  groupId: string;
}

/** Whether the allowed lists let the caller use the item (admins always). */
export function listsAllow(auth: ListsCaller, allowed: unknown): boolean {
  if (auth.role === role.admin) return true;
  const lists = (allowed ?? {}) as Partial<Record<string, unknown>>;
  const dims: [string, string][] = [
    ['roles', auth.role],
    ['categories', auth.categoryId],
    ['groups', auth.groupId],
    ['users', auth.userId],
  ];
  return dims.some(([key, value]) => {
    const list = lists[key];
    return Array.isArray(list) && (list.length === 0 || list.includes(value));
  });
}
