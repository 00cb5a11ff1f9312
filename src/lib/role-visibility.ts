/**
 * The role visibility the server gives the signed-in role (GET /user/role-visibility): the role
 * sets it is in, the fields and actions hidden from it. The admin edits it at run time, so it
 * overrides the generated tables (x-roles, field roles) here, in one place, for the navbar, the
 * actions, the list columns, the details and the forms. Until it is loaded, and for any other role
 * than the one it was answered for, the generated tables decide. Loaded after login and again on
 * the `role_visibility` socket event (src/app/session-bootstrap.ts); cleared at logout.
 */
import { useSyncExternalStore } from 'react';
import type { Operation } from '@/generated/api';
import type { Role, RoleVisibilityEffective } from '@/generated/types';

let state: RoleVisibilityEffective | null = null;
/** Increases with every change: caches keyed by it are recomputed. */
let revision = 0;
const listeners = new Set<() => void>();

/** Puts the server's answer in force (null = back to the generated tables). */
export function setRoleVisibility(next: RoleVisibilityEffective | null): void {
  state = next;
  revision += 1;
  for (const listener of listeners) listener();
}

/** The answer in force, if any. */
export function getRoleVisibility(): RoleVisibilityEffective | null {
  return state;
}

/** A number that changes whenever the visibility does (cache keys). */
export function roleVisibilityRevision(): number {
  return revision;
}

/** Re-renders the caller when the visibility changes; answers the revision. */
export function useRoleVisibilityRevision(): number {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => revision,
    () => revision,
  );
}

/** The answer when it was given for this role. */
function forRole(role: Role | null | undefined): RoleVisibilityEffective | null {
  return state && role && state.role === role ? state : null;
}

/**
 * Whether the role is in a role set of a resource: the server's answer when it has the resource,
 * else the generated roles of the set (`fallback`; null = every role).
 */
export function inRoleSet(
  role: Role | null | undefined,
  resource: string,
  set: string,
  fallback: readonly Role[] | null | undefined,
): boolean {
  if (!role) return false;
  const sets = forRole(role)?.sets[resource];
  if (sets) return sets.includes(set);
  return !fallback || fallback.includes(role);
}

/** Whether the role may call an operation (its access set, live). */
export function operationAllowed(
  op: Pick<Operation, 'resource' | 'access' | 'roles'>,
  role: Role | null | undefined,
): boolean {
  if (op.roles === null || op.access === 'public') return true;
  if (!role) return false;
  if (op.access === 'token') return true;
  return inRoleSet(role, op.resource, op.access, op.roles);
}

const NONE: readonly string[] = [];

/** Field paths of a resource the role does not see (the same list until the visibility changes). */
export function hiddenFields(resource: string, role: Role | null | undefined): readonly string[] {
  return forRole(role)?.hiddenFields[resource] ?? NONE;
}

/** Whether a field path is one of the hidden paths or lies inside one. */
export function pathHidden(hidden: readonly string[], path: string): boolean {
  return hidden.some((h) => path === h || path.startsWith(`${h}.`));
}

/** Whether a field of a resource (or one of its parents) is hidden from the role. */
export function fieldHidden(
  resource: string,
  path: string,
  role: Role | null | undefined,
): boolean {
  return pathHidden(hiddenFields(resource, role), path);
}

/** Whether an x-actions action of a resource is hidden from the role. */
export function actionHidden(
  resource: string,
  action: string,
  role: Role | null | undefined,
): boolean {
  return forRole(role)?.hiddenActions[resource]?.includes(action) ?? false;
}
