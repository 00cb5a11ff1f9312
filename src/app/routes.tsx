/**
 * Routes derived from the generated resources: every list/create/edit/show path and every extra
 * route, gated by the resource's roles and titled `resources:<name>.actions.<kind>`. Its screen is
 * the bespoke page, or the engine's page for the kind; a route whose screen or operations are not
 * built yet shows not found to the roles it allows (the others are sent to the desktops).
 */
import { Suspense, type ReactElement } from 'react';
import { Route } from 'react-router';
import type { TFunction } from 'i18next';
import { resourceOf } from '@/generated/resources';
import { NotFoundPage } from '@/features/system/not-found-page';
import { ScreenErrorBoundary } from '@/components/screen-error-boundary';
import { RoleGate } from './guard/role-gate';
import { PageLoader } from './page-loader';
import { bespokePages, enginePages } from './pages';
import { deriveRoutes } from './route-table';

export { deriveRoutes, type DerivedRoute } from './route-table';

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
