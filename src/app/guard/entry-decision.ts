/**
 * The decision taken before the application loads: an anonymous visit to a path inside the
 * session guard goes to the login page at once, from the stored session alone, so it downloads
 * nothing of the application (nor the router: routes match by their static and `:param`
 * segments). Every other visit loads the application, whose guard decides.
 */
import { isGuardedPath, matchesRoute, segments } from '@common/entry-paths';
import { resourceOf } from '@/generated/resources';
import { expiresWithin, tokenType, type TokenClaims } from '@/lib/token';
import { LOGIN_PATH } from '@/providers/auth-provider';

export { isGuardedPath, matchesRoute } from '@common/entry-paths';

/** Where a visit goes before the application loads (null: load the application). */
export function decideEntry(pathname: string, hasSession: boolean): string | null {
  if (hasSession || !isGuardedPath(pathname)) return null;
  return LOGIN_PATH;
}

/** The browser VNC viewer's route (`/viewer/vnc/:id`). */
const VNC_VIEWER_ROUTE = resourceOf('desktops')?.meta.extraRoutes.viewer ?? null;

/**
 * The desktop of a visit to the VNC viewer page that shows without the application: a login
 * token that is not due for renewal (the application's guard handles every other token); null
 * for any other visit.
 */
export function viewerAloneId(
  pathname: string,
  claims: TokenClaims | null,
  nowMs: number,
): string | null {
  if (!VNC_VIEWER_ROUTE || !matchesRoute(VNC_VIEWER_ROUTE, pathname)) return null;
  if (!claims || tokenType(claims) !== 'login' || expiresWithin(claims, nowMs)) return null;
  const index = segments(VNC_VIEWER_ROUTE).indexOf(':id');
  return segments(pathname)[index] ?? null;
}
