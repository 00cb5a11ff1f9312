/**
 * Routes derived from the generated resources: every list/create/edit/show path becomes a route
 * gated by `meta.roles`, titled from `meta.label` / `resources:<name>.actions.<action>`.
 */
import { Suspense, type ReactElement } from 'react';
import { Route } from 'react-router';
import type { TFunction } from 'i18next';
import { resources } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { PlaceholderPage } from '@/features/system/placeholder-page';
import { RoleGate } from './guard/role-gate';
import { PageLoader } from './page-loader';
import { pages } from './pages';

export const ROUTE_ACTIONS = ['list', 'create', 'edit', 'show'] as const;
/** list/create/edit/show, or the kind of an `x-resource.extraRoutes` entry (e.g. `viewer`). */
export type RouteAction = string;

export interface DerivedRoute {
  resource: string;
  action: RouteAction;
  path: string;
  roles: readonly Role[] | null;
  routeName: string | null;
  titleKey: string;
}

/** Lists the routes of every generated resource. */
export function deriveRoutes(): DerivedRoute[] {
  const routes: DerivedRoute[] = [];
  for (const resource of resources) {
    const record = resource as unknown as Record<string, unknown>;
    for (const action of ROUTE_ACTIONS) {
      const path = record[action];
      if (typeof path !== 'string') continue;
      const routeNames = resource.meta.routeNames as Partial<Record<RouteAction, string>>;
      routes.push({
        resource: resource.name,
        action,
        path,
        roles: (resource.meta.roles as readonly Role[] | null) ?? null,
        routeName: routeNames[action] ?? null,
        titleKey: `resources:${resource.name}.actions.${action}`,
      });
    }
    const extra = ((resource.meta as { extraRoutes?: Record<string, string> }).extraRoutes ??
      {}) as Record<string, string>;
    for (const [kind, path] of Object.entries(extra)) {
      routes.push({
        resource: resource.name,
        action: kind,
        path,
        roles: (resource.meta.roles as readonly Role[] | null) ?? null,
        routeName: (resource.meta.routeNames as Partial<Record<string, string>>)[kind] ?? null,
        titleKey: `resources:${resource.name}.actions.${kind}`,
      });
    }
  }
  return routes;
}

/**
 * Renders the derived routes as react-router elements. Resources without roles (e.g. the direct
 * viewer) are routes without login; the others go inside the session guard.
 */
export function renderResourceRoutes(t: TFunction, scope: 'protected' | 'public'): ReactElement[] {
  const routes = deriveRoutes().filter((route) =>
    scope === 'public' ? route.roles === null : route.roles !== null,
  );
  return routes.map((route) => {
    const title = t(route.titleKey);
    const Page = pages[route.resource]?.[route.action];
    return (
      <Route
        key={`${route.resource}.${route.action}`}
        path={route.path}
        element={
          <RoleGate roles={route.roles} title={title}>
            {Page ? (
              <Suspense fallback={<PageLoader />}>
                <Page />
              </Suspense>
            ) : (
              <PlaceholderPage title={title} />
            )}
          </RoleGate>
        }
      />
    );
  });
}
