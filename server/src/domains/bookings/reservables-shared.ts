/**
 * What the administration of reservables shares: the allowed roles as the forms show them and as
 * they are stored, the check of the users and groups the allowed lists name, the errors, and the
 * helpers of its writes.
 */
import type { Allowed, AllowedShareLists2, Role } from '../../../../src/generated/types.ts';
import { roles as ALL_ROLES } from '../../../../src/generated/policy.ts';
import { reservableItems, type ReservableRow } from '../../platform/db/schema.ts';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';

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

export const notFound = (what: string, id: string) =>
  new ApiError('not_found', `${what} not found`, 'not_found', { id });

export const exists = (what: string, field: string, code: string) =>
  new ApiError('conflict', `A ${what} with this ${field} already exists`, code, { field });

export const inUse = (what: string, uses: Record<string, number>) =>
  new ApiError('precondition_required', `The ${what} is in use`, 'reservable_in_use', uses);

/** Whether a write failed on a unique key (two creates of one id at the same instant). */
export function uniqueViolation(err: unknown): boolean {
  const codeOf = (e: unknown) =>
    e && typeof e === 'object' && 'code' in e ? (e as { code: unknown }).code : undefined;
  const cause = err && typeof err === 'object' && 'cause' in err ? err.cause : undefined;
  return codeOf(err) === '23505' || codeOf(cause) === '23505';
}

/** A create whose id another create took meanwhile answers the same 409 as when it was taken before. */
export async function creating<T>(work: () => Promise<T>, conflict: () => ApiError): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (uniqueViolation(err)) throw conflict();
    throw err;
  }
}

/** The item's row (locked for update when asked); 404 when it does not exist. */
export async function itemRow(on: Executor, id: string, lock = false): Promise<ReservableRow> {
  const query = on.select().from(reservableItems).where(eq(reservableItems.id, id));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Reservable item', id);
  return row;
}

/** The count a `select({ n: count() })` answers. */
export async function countOf(query: PromiseLike<{ n: number }[]>): Promise<number> {
  const [row] = await query;
  return Number(row?.n ?? 0);
}
