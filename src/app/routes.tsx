/**
 * Routes derived from the generated resources: every list/create/edit/show path and every extra
 * route, gated by the resource's roles and titled `resources:<name>.actions.<kind>`. Its screen is
 * the bespoke page, or the engine's page for the kind; a route whose screen or operations are not
 * built yet shows not found to the roles it allows (the others are sent to the desktops).
 */
import { Suspense, type ReactElement } from 'react';
import { Route } from 'react-router';
import type { TFunction } from 'i18next';
import { operations, type Operation } from '@/generated/api';
import { resourceList, resourceOf } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { routeBuilt } from '@/resources/actions/available-actions';
import { NotFoundPage } from '@/features/system/not-found-page';
import { ScreenErrorBoundary } from '@/components/screen-error-boundary';
import { RoleGate } from './guard/role-gate';
import { PageLoader } from './page-loader';
import { bespokeBuilt, bespokePages, enginePages } from './pages';

export interface DerivedRoute {
  resource: string;
  /** list, create, edit, show or an extra route kind (viewer, videowall...) */
  kind: string;
  path: string;
  roles: readonly Role[] | null;
  titleKey: string;
  /** false while its screen or operations are not built: the route then shows not found */
  built: boolean;
}

/** Every route of every resource, with whether its screen is built. */
export function deriveRoutes(): DerivedRoute[] {
  const routes: DerivedRoute[] = [];
  for (const resource of resourceList) {
    const paths: Record<string, string | undefined> = {
      list: resource.list,
      create: resource.create,
      edit: resource.edit,
      show: resource.show,
      ...resource.meta.extraRoutes,
    };
    for (const [kind, path] of Object.entries(paths)) {
      if (!path) continue;
      const bespoke = bespokePages[resource.name]?.[kind];
      const engine = kind in resource.meta.forms ? 'form' : kind;
      // A form route's preview is part of its screen: it is built when that read is too.
      const preview = resource.meta.forms[kind]?.preview;
      // A bespoke screen that names its own operations is built when they are.
      const built =
        (!!bespoke || engine in enginePages) &&
        (bespokeBuilt(resource.name, kind) ?? routeBuilt(resource.name, kind)) &&
        (!preview ||
          (operations as Readonly<Record<string, Operation>>)[`${resource.name}.${preview}`]
            ?.planned === false);
      routes.push({
        built,
        resource: resource.name,
        kind,
        path,
        roles: resource.meta.roles,
        titleKey: built ? `resources:${resource.name}.actions.${kind}` : 'common:routes.not_found',
      });
    }
  }
  return routes;
}

/**
 * Renders the derived routes as react-router elements. Resources without roles (the direct
 * viewer) are routes without login; the others go inside the session guard.
 */
export function renderResourceRoutes(t: TFunction, scope: 'protected' | 'public'): ReactElement[] {
  const routes = deriveRoutes().filter((route) =>
    scope === 'public' ? route.roles === null : route.roles !== null,
  );
  return routes.map((route) => {
    const forms = resourceOf(route.resource)?.meta.forms ?? {};
    const Page =
      bespokePages[route.resource]?.[route.kind] ??
      enginePages[route.kind in forms ? 'form' : route.kind];
    return (
      <Route
        key={`${route.resource}.${route.kind}`}
        path={route.path}
        element={
          <RoleGate roles={route.roles} title={t(route.titleKey)}>
            {route.built && Page ? (
              <ScreenErrorBoundary>
                <Suspense fallback={<PageLoader />}>
                  {/* Keyed by route: two form routes in a row never share a page's state. */}
                  <Page
                    key={`${route.resource}.${route.kind}`}
                    resource={route.resource}
                    kind={route.kind}
                  />
                </Suspense>
              </ScreenErrorBoundary>
            ) : (
              <NotFoundPage />
            )}
          </RoleGate>
        }
      />
    );
  });
}
