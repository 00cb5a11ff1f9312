/**
 * The actions a record offers a role now: the state machine's offer (common/state-actions) kept
 * only where the action can work: its operation is built and the role may call it, its route
 * exists, and the admin's role visibility (src/lib/role-visibility.ts) does not hide it from the
 * role. Pure, so the card, the table row and the details page agree.
 */
import { operations, type Operation } from '@/generated/api';
import { resourceOf } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { actionOf, offeredActions, type ActionDefinition } from '@common/state-actions';
import { actionHidden, operationAllowed } from '@/lib/role-visibility';

export interface AvailableAction {
  name: string;
  def: ActionDefinition;
}

/** The operation of `<resource>.<name>` when it is built and the role may call it (live role sets). */
export function usableOperation(
  resource: string,
  name: string,
  role: Role | null,
): Operation | null {
  const op = (operations as Readonly<Record<string, Operation>>)[`${resource}.${name}`];
  if (!op || op.planned || !role) return null;
  return operationAllowed(op, role) ? op : null;
}

/** A route named by an action: a kind of the resource, or `<resource>:<kind>` of another. */
export function routeTarget(resource: string, route: string): { resource: string; kind: string } {
  const at = route.indexOf(':');
  return at < 0
    ? { resource, kind: route }
    : { resource: route.slice(0, at), kind: route.slice(at + 1) };
}

/** The path of a route kind of a resource (list, create, edit, show or an extra route). */
export function routePath(resource: string, kind: string): string | null {
  const def = resourceOf(resource);
  if (!def) return null;
  const routes: Readonly<Record<string, string | undefined>> = {
    list: def.list,
    create: def.create,
    edit: def.edit,
    show: def.show,
    ...def.meta.extraRoutes,
  };
  return routes[kind] ?? null;
}

/**
 * The operation a route kind's screen needs (its data): show and edit read `show`, edit writes
 * `update`; `action` is the details page with an action's dialog open (`/profile/:action`).
 */
const ROUTE_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  list: ['list'],
  show: ['show'],
  action: ['show'],
  edit: ['show', 'update'],
  create: ['create'],
};

/** The operations a route kind's screen needs: its data, or the operation its form calls. */
function routeOperations(resource: string, kind: string): readonly string[] | undefined {
  const form = resourceOf(resource)?.meta.forms[kind];
  return form ? [form.operation] : ROUTE_OPERATIONS[kind];
}

/** True when the operations a route kind's screen needs are built (whatever the role). */
export function routeBuilt(resource: string, kind: string): boolean {
  if (!routePath(resource, kind)) return false;
  return (routeOperations(resource, kind) ?? []).every((name) => {
    const op = (operations as Readonly<Record<string, Operation>>)[`${resource}.${name}`];
    return !!op && !op.planned;
  });
}

/** True when a route kind of the resource has a working screen for the role. */
export function routeUsable(resource: string, kind: string, role: Role | null): boolean {
  if (!routePath(resource, kind)) return false;
  const needs = routeOperations(resource, kind);
  if (!needs) return true;
  return needs.every((name) => usableOperation(resource, name, role) !== null);
}

/** The href of a route kind for one record (`:id` filled in, or `?id=` for routes without one). */
export function routeHref(resource: string, kind: string, id?: string): string | null {
  const path = routePath(resource, kind);
  if (!path) return null;
  if (id === undefined) return path;
  return path.includes(':id')
    ? path.replace(':id', encodeURIComponent(id))
    : `${path}?${new URLSearchParams({ id }).toString()}`;
}

/**
 * The href an action's route opens for a record: `:id` filled in, or the action's `fill` as the
 * query (`/templates/new?desktop_id=…`), else `?id=`.
 */
export function actionHref(
  resource: string,
  def: ActionDefinition,
  record: Readonly<Record<string, unknown>>,
): string | null {
  if (!def.route) return null;
  const target = routeTarget(resource, def.route);
  const idField = resourceOf(resource)?.meta.idField ?? 'id';
  const id = String(record[idField] ?? '');
  if (!def.fill) return routeHref(target.resource, target.kind, id);
  const path = routePath(target.resource, target.kind);
  if (!path) return null;
  const query = new URLSearchParams(
    Object.entries(def.fill).map(([key, field]) => [key, String(record[field] ?? '')]),
  );
  return `${path.replace(':id', encodeURIComponent(id))}?${query.toString()}`;
}

/** The actions the record offers the role, in the schema's order. */
export function availableActions(
  resource: string,
  record: Readonly<Record<string, unknown>>,
  role: Role | null,
): AvailableAction[] {
  return offeredActions(resource, record).flatMap((name) => {
    const def = actionOf(resource, name);
    if (!def || actionHidden(resource, name, role)) return [];
    if (def.operation && !usableOperation(resource, def.operation, role)) return [];
    if (def.route) {
      const target = routeTarget(resource, def.route);
      if (!routeUsable(target.resource, target.kind, role)) return [];
    }
    return [{ name, def }];
  });
}

/**
 * The list-level actions (x-ui.list.actions) the role may use: those whose operation (a handler's
 * is its `param.operation`: the file a download saves) is built and the role may call it.
 */
export function listActions(
  resource: string,
  names: readonly string[],
  role: Role | null,
): AvailableAction[] {
  return names.flatMap((name) => {
    const def = actionOf(resource, name);
    const operation = def?.operation ?? (def?.handler ? def.param?.operation : undefined);
    return def &&
      operation &&
      !actionHidden(resource, name, role) &&
      usableOperation(resource, operation, role)
      ? [{ name, def }]
      : [];
  });
}
