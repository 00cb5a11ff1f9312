/**
 * Point 8 of the guard: log out when the session cookie disappears (outside exempt pages). Only a
 * cookie seen before can disappear: pages without login (not found) stay put without a session.
 */
import { getToken } from '@/lib/token';
import { logout } from '@/providers/auth-provider';
import { COOKIE_WATCH_INTERVAL_MS, shouldLogoutOnMissingCookie } from './guard-decision';

/** Watches the session cookie every COOKIE_WATCH_INTERVAL_MS; returns the stop function. */
export function watchSessionCookie(): () => void {
  let hadSession = !!getToken();
  const timer = setInterval(() => {
    const hasToken = !!getToken();
    if (hasToken) hadSession = true;
    else if (hadSession && shouldLogoutOnMissingCookie(hasToken, window.location.pathname))
      // null: the session ended is the cookie's absence; a cookie stored since is kept
      void logout(null);
  }, COOKIE_WATCH_INTERVAL_MS);
  return () => clearInterval(timer);
}
