/**
 * Root: Mantine, the toasts and either the login form alone or the router. The login form (the
 * page an anonymous visit to a guarded path is sent to, decided from the stored session) renders
 * without the router, the refine application, socket.io, the desktops screen, the toasts or the
 * catalogues it does not use; they load while the user types, and its first navigation (the
 * login's, a link, maintenance) hands over to the router (`router-root`). The browser VNC viewer
 * page opened with a usable session also renders alone (`viewer-alone`); a navigation away hands
 * over to the router too. Which of them a visit starts on, and the reads each needs (the form's
 * categories and providers, the console's ticket and chunk), is decided as the entry's first module
 * evaluates (`entry-reads`); the application's session work follows the console's first answer.
 */
import { lazy, startTransition, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { MantineProvider } from '@mantine/core';
import { STATIC_LOGIN_ID } from '@common/prerendered-login';
import { LoginPage } from '@/features/auth/login-page';
import { drawnCategories } from '@/features/auth/static-login';
import { whenIdle } from '@/lib/idle';
import { navigateTo, setNavigator } from '@/lib/navigation';
import { preloadableLazy } from '@/lib/preloadable-lazy';
import { setSessionModal } from '@/lib/session-modal-store';
import { hasStoredSession } from '@/lib/token';
import { configureHttpClient } from '@/providers/http-client';
import { logout } from '@/providers/auth-provider';
import { entryScreen } from './entry-reads';
import { prefetchLanding } from './landing-prefetch';
import { PageLoader } from './page-loader';
import { cssVariablesResolver, themeWithLabels } from './theme';

/** The router and its routes (everything but the login form on its own). */
const loadRouterRoot = () => import('./router-root');
const RouterRoot = preloadableLazy(() => loadRouterRoot().then((m) => m.RouterRoot));
const loadViewerAlone = () => import('./viewer-alone');
const ViewerAlone = lazy(() => loadViewerAlone().then((m) => ({ default: m.ViewerAlone })));
const Notifications = lazy(() =>
  import('@mantine/notifications').then((m) => ({ default: m.Notifications })),
);

/** Fetches the router, the application and the landing list while the user types the login (goal G3). */
function preloadLanding(): void {
  // Through the components that render them, so that none suspends at its first render after
  // the sign-in (React would hold the next screen back for up to 300 ms).
  void RouterRoot.preload();
  void loadRouterRoot().then((m) => m.preloadApp());
  void import('@/resources/list/resource-list-page');
}

configureHttpClient({
  onUnauthorized: (_error, token) => void logout(token),
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

const viewerId = entryScreen.kind === 'viewer' ? entryScreen.id : null;
/** The category choice the page's drawn login form offers: the live form draws the same at once. */
const loginCategories = typeof document === 'undefined' ? [] : drawnCategories();
/** The viewer page's module once loaded: the first render draws it without a Suspense fallback. */
let viewerModule: Awaited<ReturnType<typeof loadViewerAlone>> | null = null;
const viewerLoading = viewerId
  ? loadViewerAlone().then(
      (module) => {
        viewerModule = module;
      },
      () => undefined, // drawn through the lazy component, which shows the failure
    )
  : null;

/**
 * Resolves once the first render has what it draws beyond the catalogues: the viewer page's
 * module when this visit shows it alone (React reveals content that suspended at its first render
 * only some 300 ms after its fallback; a module that is there renders at once).
 */
export function rootReady(): Promise<void> {
  return viewerLoading ?? Promise.resolve();
}

/** The whole SPA. */
export function Root() {
  const { t } = useTranslation();
  const closeLabel = t('common:actions.close');
  const theme = useMemo(() => themeWithLabels(closeLabel), [closeLabel]);
  const [alone] = useState(() => (entryScreen.kind === 'app' ? null : entryScreen.kind));
  const [routed, setRouted] = useState(alone === null);
  // The login form drawn at build time hands over to the live one (`static-login`); a page that
  // shows another screen drops it.
  useEffect(() => document.getElementById(STATIC_LOGIN_ID)?.remove(), []);
  // Until the router mounts, a navigation away from the login form (or the viewer) changes the
  // address and hands the page to the router, which renders that address. After a sign-in the
  // form (its button busy) stays until the next page is ready; a link followed anonymously (sign
  // up, forgot password) shows the page loader at once, so nobody types into a form that is about
  // to go away.
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
        ) : alone === 'viewer' && viewerId ? (
          viewerModule ? (
            <viewerModule.ViewerAlone id={viewerId} />
          ) : (
            <ViewerAlone id={viewerId} />
          )
        ) : (
          <LoginPage
            drawnCategories={loginCategories}
            preload={preloadLanding}
            onSignedIn={prefetchLanding}
          />
        )}
      </Suspense>
    </MantineProvider>
  );
}
