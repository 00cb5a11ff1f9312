/**
 * Access control from the generated tables: a resource's routes are gated by `meta.roles`; an
 * action that names an operation (`<resource>.<action>`) by that operation's roles; a role-set
 * name (`read`, `write`...) by `roleSets[resource][set]`. The admin's role visibility
 * (src/lib/role-visibility.ts) overrides the generated sets for the signed-in role.
 */
import type { AccessControlProvider } from '@refinedev/core';
import { operations, type Operation } from '@/generated/api';
import { resources } from '@/generated/resources';
import { roleSets } from '@/generated/roles';
import type { Role } from '@/generated/types';
import { inRoleSet, operationAllowed } from '@/lib/role-visibility';
import { getSessionState } from '@/lib/session-state';
import { decodeToken, getToken } from '@/lib/token';

const ROUTE_ACTIONS = new Set(['list', 'create', 'edit', 'show', 'clone']);

/** Roles a resource's routes allow (null = every logged-in role). */
export function resourceRoles(resource: string): readonly Role[] | null {
  const found = resources.find((r) => r.name === resource);
  return (found?.meta.roles as readonly Role[] | null | undefined) ?? null;
}

/** Pure decision used by the provider, the guard and the navbar. */
export function canAccess(
  role: Role | null | undefined,
  resource: string | undefined,
  action: string,
): boolean {
  if (!role) return false;
  if (!resource) return true;
  const routeRoles = resourceRoles(resource);
  if (routeRoles && !inRoleSet(role, resource, 'view', routeRoles)) return false;
  if (ROUTE_ACTIONS.has(action)) return true;
  const op = (operations as Record<string, Operation>)[`${resource}.${action}`];
  if (op) return operationAllowed(op, role);
  const sets = (roleSets as Record<string, Record<string, readonly Role[]>>)[resource];
  const set = sets?.[action];
  if (set) return inRoleSet(role, resource, action, set);
  return true;
}

/** The current role: from the fetched user, else from the token. */
export function currentRole(): Role | null {
  return getSessionState().user?.role_id ?? decodeToken(getToken())?.data?.role_id ?? null;
}

export const accessControlProvider: AccessControlProvider = {
  can: async ({ resource, action }) => {
    const can = canAccess(currentRole(), resource, action);
    return can ? { can } : { can, reason: 'forbidden' };
  },
  options: { buttons: { enableAccessControl: true, hideIfUnauthorized: true } },
};
