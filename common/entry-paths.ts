/**
 * Which page paths the SPA's session guard protects, from the generated resources: the index and
 * the routes of resources with roles, less the error pages and the routes of resources without
 * roles. The SPA sends an anonymous visit to one of them to the login page before it loads the
 * application; the server answers such a visit with the login page drawn at build time. A visit
 * is anonymous when it carries neither session cookie.
 */
import { resourceList } from '../src/generated/resources.ts';

export { AUTHORIZATION_COOKIE, hasSessionCookie, SESSION_COOKIE } from './session-cookies.ts';

/** The login page's path. */
export const LOGIN_PATH = '/login';

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

export const segments = (path: string): string[] => path.split('/').filter(Boolean);

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
