/**
 * What follows an action's success, whichever way it ran (a button, a confirmation, a form
 * dialog): the record's details are read again (the show query; for a resource without live
 * events, whose lists no event corrects, its lists too), the action's registered
 * `effect` runs, and its `then` route (a route kind of the resource or `<resource>:<kind>`) is
 * where the user goes once the dialog is closed.
 */
import { useCallback } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { resourceOf } from '@/generated/resources';
import type { ActionDefinition } from '@common/state-actions';
import { resourceKeyPrefix } from '@/providers/live-provider';
import { resolveActionEffect } from './action-effects';
import { routePath, routeTarget } from './available-actions';

type Values = Readonly<Record<string, unknown>>;

/** The path of an action's `then` route for a record (`:id` filled in), or null without one. */
export function thenHref(resource: string, def: ActionDefinition, record: Values): string | null {
  if (!def.then) return null;
  const target = routeTarget(resource, def.then);
  const path = routePath(target.resource, target.kind);
  if (!path) return null;
  const idField = resourceOf(resource)?.meta.idField ?? 'id';
  return path.replace(':id', encodeURIComponent(String(record[idField] ?? '')));
}

export interface ActionSuccess {
  resource: string;
  /** The action's name in the schema. */
  name: string;
  def: ActionDefinition;
  record: Values;
  /** What the dialog asked (none for a button or a confirmation). */
  values: Values;
  answer: unknown;
}

/** Refetches the record's details and runs the action's effect once its operation succeeded. */
export async function afterActionSuccess(
  queryClient: QueryClient,
  { resource, name, def, record, values, answer }: ActionSuccess,
): Promise<void> {
  const prefix = resourceKeyPrefix(resource);
  const live = resourceOf(resource)?.meta.live;
  void queryClient.invalidateQueries({ queryKey: live ? [...prefix, 'one'] : prefix });
  if (def.effect)
    await resolveActionEffect(
      resource,
      name,
      def.effect,
    )({
      resource,
      action: name,
      record,
      values,
      answer,
    });
}

/** `afterActionSuccess` bound to the application's query client. */
export function useActionSuccess(): (success: ActionSuccess) => Promise<void> {
  const queryClient = useQueryClient();
  return useCallback((success) => afterActionSuccess(queryClient, success), [queryClient]);
}
