/**
 * The refine application (loaded lazily after the login route): providers, derived routes,
 * guard, session modals. Composition only.
 */
import '@mantine/core/styles/AppShell.css';
import '@mantine/core/styles/Burger.css';
import '@mantine/core/styles/NavLink.css';
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/CloseButton.css';
import '@mantine/core/styles/Loader.css';
import '@mantine/core/styles/Center.css';
import { useEffect, useMemo } from 'react';
import { Refine, type ResourceProps } from '@refinedev/core';
import routerProvider from '@refinedev/react-router';
import { Navigate, Route, Routes } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resourceList } from '@/generated/resources';
import { ErrorPage } from '@/features/system/error-page';
import { NotFoundPage } from '@/features/system/not-found-page';
import { getToken } from '@/lib/token';
import { accessControlProvider } from '@/providers/access-control-provider';
import { authProvider } from '@/providers/auth-provider';
import { createDataProvider } from '@/providers/data-provider';
import { i18nProvider } from '@/providers/i18n-provider';
import { createLiveProvider } from '@/providers/live-provider';
import { notificationProvider } from '@/providers/notification-provider';
import { watchSessionCookie } from './guard/cookie-watch';
import { SessionGuard } from './guard/session-guard';
import { AppLayout } from './layout/app-layout';
import { queryClient } from './query-client';
import { renderResourceRoutes } from './routes';
import { setBootstrapLiveProvider } from './session-bootstrap';
import './registrations';
import { SessionModals } from './session-modals';
import { HOME_PATH } from '@/lib/paths';

const liveProvider = createLiveProvider(queryClient, { batch: 'frame' });
const dataProvider = createDataProvider(undefined, liveProvider);
setBootstrapLiveProvider(liveProvider);

const refineResources: ResourceProps[] = resourceList.map(
  ({ name, list, create, edit, show, meta }) => ({
    name,
    ...(list ? { list } : {}),
    ...(create ? { create } : {}),
    ...(edit ? { edit } : {}),
    ...(show ? { show } : {}),
    // refine's meta: parent is a resource name or absent, the icon a component (ours are names).
    meta: { ...meta, parent: meta.parent ?? undefined, icon: undefined },
  }),
);

/** Where `/` leads: the desktops list. */

/** Point 8 of the guard: the session cookie's watch (./guard/cookie-watch). */
function CookieWatcher() {
  useEffect(() => watchSessionCookie(), []);
  return null;
}

/** Route `*` (no login needed): inside the app layout with a session, bare without one. */
function NotFoundRoute() {
  if (!getToken()) return <NotFoundPage />;
  return (
    <SessionGuard>
      <AppLayout>
        <NotFoundPage />
      </AppLayout>
    </SessionGuard>
  );
}

/** The authenticated application. */
export function App() {
  const { i18n } = useTranslation();
  // Route titles are rebuilt with a translator fixed to the current language, so a language change
  // (which keeps `t`'s identity) re-derives them.
  const language = i18n.language;
  const resourceRoutes = useMemo(
    () => renderResourceRoutes(i18n.getFixedT(language), 'protected'),
    [i18n, language],
  );
  const publicRoutes = useMemo(
    () => renderResourceRoutes(i18n.getFixedT(language), 'public'),
    [i18n, language],
  );

  return (
    <Refine
      routerProvider={routerProvider}
      dataProvider={dataProvider}
      liveProvider={liveProvider}
      authProvider={authProvider}
      accessControlProvider={accessControlProvider}
      i18nProvider={i18nProvider}
      notificationProvider={notificationProvider}
      resources={refineResources}
      options={{
        liveMode: 'manual',
        disableTelemetry: true,
        syncWithLocation: false,
        warnWhenUnsavedChanges: false,
        reactQuery: { clientConfig: queryClient },
      }}
    >
      <CookieWatcher />
      <Routes>
        <Route path="/error/:code" element={<ErrorPage />} />
        {publicRoutes}
        <Route
          element={
            <SessionGuard>
              <AppLayout />
            </SessionGuard>
          }
        >
          <Route index element={<Navigate to={HOME_PATH} replace />} />
          {resourceRoutes}
        </Route>
        <Route path="*" element={<NotFoundRoute />} />
      </Routes>
      <SessionModals />
    </Refine>
  );
}
