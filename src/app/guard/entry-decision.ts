/**
 * The decision taken before the application loads: an anonymous visit to a path inside the
 * session guard goes to the login page at once, from the stored session alone, so it downloads
 * nothing of the application (nor the router: routes match by their static and `:param`
 * segments). Every other visit loads the application, whose guard decides.
 */
import { resourceList, resourceOf } from '@/generated/resources';
import { expiresWithin, tokenType, type TokenClaims } from '@/lib/token';
import { LOGIN_PATH } from '@/providers/auth-provider';

/** Every route path of a resource: list, create, edit, show and its extra routes. */
function pathsOf(resource: (typeof resourceList)[number]): string[] {
  const paths = [resource.list, resource.create, resource.edit, resource.show];
  return [...paths, ...Object.values(resource.meta.extraRoutes)].filter(
    (path): path is string => typeof path === 'string' && path !== '',
  );
}

/** Paths inside the session guard: the index and the routes of resources with roles. */
export const GUARDED_PATHS: readonly string[] = [
  '/',
  ...resourceList.filter((r) => r.meta.roles !== null).flatMap(pathsOf),
];
/** Paths without login: the error pages and the routes of resources without roles. */
export const PUBLIC_PATHS: readonly string[] = [
  '/error/:code',
  ...resourceList.filter((r) => r.meta.roles === null).flatMap(pathsOf),
];

const segments = (path: string): string[] => path.split('/').filter(Boolean);

/** Whether `pathname` is a path of the route `pattern` (static segments and `:param` ones). */
export function matchesRoute(pattern: string, pathname: string): boolean {
  const want = segments(pattern);
  const have = segments(pathname);
  return (
    want.length === have.length &&
    want.every((part, i) => (part.startsWith(':') ? !!have[i] : part === have[i]))
  );
}

const matches = (patterns: readonly string[], pathname: string): boolean =>
  patterns.some((pattern) => matchesRoute(pattern, pathname));

/** True when the application's session guard protects `pathname`. */
export function isGuardedPath(pathname: string): boolean {
  return !matches(PUBLIC_PATHS, pathname) && matches(GUARDED_PATHS, pathname);
}

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
