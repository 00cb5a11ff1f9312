/**
 * Pure decisions of the navigation guard, kept apart from
 * React so they can be tested.
 */
import { resourceOf } from '@/generated/resources';
import type { Role, UserConfig } from '@/generated/types';
import { LOGIN_PATH, TOKEN_TYPE_ROUTES } from '@/providers/auth-provider';
import { expiresWithin, tokenType, type TokenClaims } from '@/lib/token';
import { HOME_PATH } from '@/lib/paths';
import { routePath } from '@/resources/actions/available-actions';

/**
 * Routes where a vanished session cookie does not log out (point 8): the login and every account
 * page (sign-up, registration, password, address check, disclaimer), which work without a session
 * or drop a step's token themselves.
 */
export const COOKIE_WATCH_EXEMPT: readonly string[] = [
  LOGIN_PATH,
  ...Object.values(resourceOf('session')?.meta.extraRoutes ?? {}),
];

/** The page a user whose account is being migrated may not leave (point 5). */
export const EXPORT_USER_PATH = routePath('profile', 'exportUser');
export const COOKIE_WATCH_INTERVAL_MS = 1000;
export { HOME_PATH };

export type TokenDecision =
  { kind: 'login' } | { kind: 'redirect'; to: string } | { kind: 'renew' } | { kind: 'ok' };

/** Points 2-4 and 7: what to do with the stored token on a protected route. */
export function decideToken(
  claims: TokenClaims | null,
  hasToken: boolean,
  pathname: string,
  nowMs: number,
): TokenDecision {
  if (!hasToken || !claims) return { kind: 'login' };
  const type = tokenType(claims);
  const forced = TOKEN_TYPE_ROUTES[type];
  if (forced) {
    // /reset-password and /verify-email accept their own token types.
    return forced === pathname ? { kind: 'ok' } : { kind: 'redirect', to: forced };
  }
  if (expiresWithin(claims, nowMs)) return { kind: 'renew' };
  return { kind: 'ok' };
}

/** Point 6: a role outside the route's roles goes to the desktops page (null = allowed). */
export function decideRole(
  role: Role | null | undefined,
  routeRoles: readonly Role[] | null | undefined,
): string | null {
  if (!routeRoles || routeRoles.length === 0) return null;
  if (role && routeRoles.includes(role)) return null;
  return HOME_PATH;
}

/** Point 8: whether the cookie watcher should log out. */
export function shouldLogoutOnMissingCookie(hasToken: boolean, pathname: string): boolean {
  if (hasToken) return false;
  return !COOKIE_WATCH_EXEMPT.some((path) => pathname === path || pathname.startsWith(`${path}/`));
}

/**
 * Point 5: while the config says the account is blocked for a migration, every route leads to the
 * export page (null = stay).
 */
export function decideMigrationBlock(
  config: Pick<UserConfig, 'migrations_block'> | null | undefined,
  pathname: string,
): string | null {
  if (!config?.migrations_block || !EXPORT_USER_PATH || pathname === EXPORT_USER_PATH) return null;
  return EXPORT_USER_PATH;
}
