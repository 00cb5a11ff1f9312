/**
 * Root: Mantine, notifications and the router. Login and maintenance live outside the refine
 * application, so the login route does not load refine, socket.io or the
 * desktops screen; everything else is the lazily loaded `App`.
 */
import { lazy, Suspense, useEffect } from 'react';
import { MantineProvider, createTheme, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { BrowserRouter, Route, Routes, useNavigate } from 'react-router';
import { LoginPage } from '@/features/auth/login-page';
import { setNavigator } from '@/lib/navigation';
import { setSessionModal } from '@/lib/session-modal-store';
import { configureHttpClient } from '@/providers/http-client';
import { logout } from '@/providers/auth-provider';
import { PageLoader } from './page-loader';

const App = lazy(() => import('./app').then((m) => ({ default: m.App })));

/** Starts loading the application and the landing list while the user types the login (goal G3). */
function preloadLanding(): void {
  void import('./app');
  void import('@/resources/list/resource-list-page');
}
const MaintenancePage = lazy(() =>
  import('@/features/system/maintenance-page').then((m) => ({ default: m.MaintenancePage })),
);

// autoContrast and darker shades keep text at WCAG AA contrast (axe colour-contrast).
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  autoContrast: true,
  luminanceThreshold: 0.17,
  defaultRadius: 'md',
});
const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': t.colors.gray[7] ?? '#495057',
    '--mantine-color-anchor': t.colors.blue[9] ?? '#1864ab',
  },
  dark: { '--mantine-color-dimmed': t.colors.dark[1] ?? '#c9c9c9' },
});

configureHttpClient({
  onUnauthorized: () => void logout(),
  onServerError: () => navigateReplace('/error/500'),
  onMaintenance: () => navigateReplace('/maintenance'),
  onRenewFailed: () => setSessionModal('logout'),
});

let routerNavigate: ((path: string, options?: { replace?: boolean }) => void) | null = null;
function navigateReplace(path: string): void {
  if (routerNavigate) routerNavigate(path, { replace: true });
  else window.location.assign(path);
}

/** Hands the router's navigate function to code outside React. */
function NavigatorBridge() {
  const navigate = useNavigate();
  useEffect(() => {
    routerNavigate = (path, options) => void navigate(path, options);
    const undo = setNavigator((path, options) => void navigate(path, options));
    return () => {
      routerNavigate = null;
      undo();
    };
  }, [navigate]);
  return null;
}

/** The whole SPA. */
export function Root() {
  return (
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      cssVariablesResolver={cssVariablesResolver}
    >
      <Notifications position="top-center" autoClose={2000} />
      <BrowserRouter>
        <NavigatorBridge />
        <Routes>
          <Route path="/login" element={<LoginPage preload={preloadLanding} />} />
          <Route
            path="/maintenance"
            element={
              <Suspense fallback={<PageLoader />}>
                <MaintenancePage />
              </Suspense>
            }
          />
          <Route
            path="*"
            element={
              <Suspense fallback={<PageLoader />}>
                <App />
              </Suspense>
            }
          />
        </Routes>
      </BrowserRouter>
    </MantineProvider>
  );
}
