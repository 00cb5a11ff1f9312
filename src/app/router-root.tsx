/**
 * The router and its routes, loaded after the login form (or at once on any other page): login,
 * maintenance and everything else, which is the lazily loaded refine `App`. An anonymous visit to a
 * guarded path goes to the login page before `App` loads.
 */
import { lazy, Suspense, useEffect, useState } from 'react';
import { BrowserRouter, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { LoginPage } from '@/features/auth/login-page';
import { loadAllNamespaces } from '@/i18n/i18n';
import { setNavigator } from '@/lib/navigation';
import { preloadableLazy } from '@/lib/preloadable-lazy';
import { hasStoredSession } from '@/lib/token';
import { loadApp } from './app-loader';
import { decideEntry } from './guard/entry-decision';
import { prefetchLanding } from './landing-prefetch';
import { PageLoader } from './page-loader';

const App = preloadableLazy(() => loadApp().then((m) => m.App));
/** Loads the application (while the user types the login), so its first screen does not suspend. */
export const preloadApp = (): Promise<void> => App.preload();
const MaintenancePage = lazy(() =>
  Promise.all([import('@/features/system/maintenance-page'), loadAllNamespaces()]).then(([m]) => ({
    default: m.MaintenancePage,
  })),
);

/** Hands the router's navigate function to code outside React. */
function NavigatorBridge() {
  const navigate = useNavigate();
  useEffect(() => setNavigator((path, options) => void navigate(path, options)), [navigate]);
  return null;
}

/**
 * Route `*`: decided once per entry from the stored session. An anonymous visit to a guarded path
 * goes to the login page without loading the application; otherwise the application loads while
 * the reads its first page needs are already on their way.
 */
function AppEntry() {
  const { pathname } = useLocation();
  const [redirect] = useState(() => decideEntry(pathname, hasStoredSession()));
  const [entryPath] = useState(pathname);
  useEffect(() => {
    if (!redirect) prefetchLanding(entryPath);
  }, [redirect, entryPath]);
  if (redirect) return <Navigate to={redirect} replace />;
  return (
    <Suspense fallback={<PageLoader />}>
      <App />
    </Suspense>
  );
}

export interface RouterRootProps {
  /** Starts loading the application while the user types the login. */
  preload: () => void;
}

/** Every route of the SPA. */
export function RouterRoot({ preload }: RouterRootProps) {
  return (
    <BrowserRouter>
      <NavigatorBridge />
      <Routes>
        <Route
          path="/login"
          element={<LoginPage preload={preload} onSignedIn={prefetchLanding} />}
        />
        <Route
          path="/maintenance"
          element={
            <Suspense fallback={<PageLoader />}>
              <MaintenancePage />
            </Suspense>
          }
        />
        <Route path="*" element={<AppEntry />} />
      </Routes>
    </BrowserRouter>
  );
}
