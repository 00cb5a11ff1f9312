/**
 * Root: Mantine, the toasts and either the login form alone or the router. The login form (the
 * page an anonymous visit to a guarded path is sent to, decided from the stored session) renders
 * without the router, the refine application, socket.io, the desktops screen, the toasts or the
 * catalogues it does not use; they load while the user types, and its first navigation (the
 * login's, a link, maintenance) hands over to the router (`router-root`).
 */
import { lazy, startTransition, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { MantineProvider } from '@mantine/core';
import { LoginPage } from '@/features/auth/login-page';
import { whenIdle } from '@/lib/idle';
import { navigateTo, setNavigator } from '@/lib/navigation';
import { setSessionModal } from '@/lib/session-modal-store';
import { hasStoredSession } from '@/lib/token';
import { configureHttpClient } from '@/providers/http-client';
import { LOGIN_PATH, logout } from '@/providers/auth-provider';
import { loadApp } from './app-loader';
import { decideEntry } from './guard/entry-decision';
import { prefetchLanding } from './landing-prefetch';
import { PageLoader } from './page-loader';
import { cssVariablesResolver, themeWithLabels } from './theme';

/** The router and its routes (everything but the login form on its own). */
const loadRouterRoot = () => import('./router-root');
const RouterRoot = lazy(() => loadRouterRoot().then((m) => ({ default: m.RouterRoot })));
const Notifications = lazy(() =>
  import('@mantine/notifications').then((m) => ({ default: m.Notifications })),
);

/** Fetches the router, the application and the landing list while the user types the login (goal G3). */
function preloadLanding(): void {
  void loadRouterRoot();
  void loadApp();
  void import('@/resources/list/resource-list-page');
}

configureHttpClient({
  onUnauthorized: () => void logout(),
  onServerError: () => navigateTo('/error/500', { replace: true }),
  onMaintenance: () => navigateTo('/maintenance', { replace: true }),
  onRenewFailed: () => setSessionModal('logout'),
});

/** The toasts' container, mounted once the first page is idle (a toast shown before waits). */
function DeferredNotifications() {
  const [ready, setReady] = useState(false);
  useEffect(() => whenIdle(() => setReady(true)), []);
  if (!ready) return null;
  return (
    <Suspense fallback={null}>
      <Notifications position="top-center" autoClose={2000} />
    </Suspense>
  );
}

/** The login form alone: the login path, or an anonymous visit to a guarded path (sent there). */
function startsOnLogin(): boolean {
  const { pathname } = window.location;
  if (pathname === LOGIN_PATH) return true;
  if (decideEntry(pathname, hasStoredSession()) !== LOGIN_PATH) return false;
  window.history.replaceState(null, '', LOGIN_PATH);
  return true;
}

/** The whole SPA. */
export function Root() {
  const { t } = useTranslation();
  const closeLabel = t('common:actions.close');
  const theme = useMemo(() => themeWithLabels(closeLabel), [closeLabel]);
  const [routed, setRouted] = useState(() => !startsOnLogin());
  // Until the router mounts, a navigation away from the login form changes the address and hands
  // the page to the router, which renders that address. After a sign-in the form (its button busy)
  // stays until the next page is ready; a link followed anonymously (sign up, forgot password)
  // shows the page loader at once, so nobody types into a form that is about to go away.
  useEffect(() => {
    if (routed) return undefined;
    return setNavigator((path, options) => {
      if (path === window.location.pathname) return;
      if (options?.replace) window.history.replaceState(null, '', path);
      else window.history.pushState(null, '', path);
      if (hasStoredSession()) startTransition(() => setRouted(true));
      else setRouted(true);
    });
  }, [routed]);

  return (
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      cssVariablesResolver={cssVariablesResolver}
    >
      <DeferredNotifications />
      <Suspense fallback={<PageLoader />}>
        {routed ? (
          <RouterRoot preload={preloadLanding} />
        ) : (
          <LoginPage preload={preloadLanding} onSignedIn={prefetchLanding} />
        )}
      </Suspense>
    </MantineProvider>
  );
}
