/**
 * The reads a signed-in page needs first, started together: the session bootstrap's user, role
 * visibility and config, and the home list's first records on the home page. They go out as soon
 * as the session exists (right after login, or while the application loads), instead of one after
 * another once the application has rendered; the bootstrap and the list take the answers
 * (`prefetchOperation`).
 */
import { resourceList } from '@/generated/resources';
import { HOME_PATH } from '@/lib/paths';
import { decodeToken, expiresWithin, getToken, tokenType } from '@/lib/token';
import {
  clearPrefetched,
  dropPrefetched,
  prefetchOperation,
  prefetchSettled,
  type PrefetchCall,
} from '@/providers/http-client';
import { onLogout } from '@/providers/auth-provider';
import { previewQuery } from '@/lib/list-preview';

onLogout(clearPrefetched);

/** The resource the home page lists. */
const HOME = resourceList.find((resource) => resource.list === HOME_PATH);
const HOME_RESOURCE = HOME?.name ?? null;
/** How many of its first records the home list draws while the whole list loads. */
const HOME_PREVIEW = HOME?.meta.list?.preview;

const isHome = (pathname: string): boolean => pathname === HOME_PATH || pathname === '/';

/** The read of the home list's first records. */
const previewCall = (): PrefetchCall | null =>
  HOME_RESOURCE && HOME_PREVIEW
    ? [`${HOME_RESOURCE}.list`, { params: {}, query: previewQuery(HOME_PREVIEW) }]
    : null;

/**
 * Prefetches for a visit to `pathname` with the stored session: only a login token that is not
 * due for renewal (the guard handles the others).
 */
export function prefetchLanding(pathname: string, nowMs = Date.now()): void {
  const claims = decodeToken(getToken());
  if (!claims || tokenType(claims) !== 'login' || expiresWithin(claims, nowMs)) return;
  prefetchOperation('session.user');
  prefetchOperation('roleVisibility.mine');
  prefetchOperation('config.show');
  if (HOME_RESOURCE && isHome(pathname)) {
    // Its first records, which the list draws while the whole list loads; the whole list only
    // when it has none. Read ahead, the whole list would be read twice: an answer asked before
    // the socket listens is asked again at its connect, or read again by the resync after it.
    const preview = previewCall();
    prefetchOperation(...(preview ?? [`${HOME_RESOURCE}.list`, { params: {} }]));
  }
}

/** The longest the shell waits for the home list's first records (a slow server draws it without). */
export const LANDING_PREVIEW_WAIT_MS = 1000;

/**
 * Resolves once the home list's first records asked ahead have come, or after
 * LANDING_PREVIEW_WAIT_MS (at once on another page, or when none were asked): the shell is then
 * drawn with them in one render, instead of drawn with the list's skeleton and drawn again some
 * 150 ms later.
 */
export function landingPreviewSettled(pathname: string): Promise<void> {
  const preview = previewCall();
  if (!preview || !isHome(pathname)) return Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    prefetchSettled(...preview),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, LANDING_PREVIEW_WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The socket has connected: an answer asked ahead may predate an event the socket would have
 * carried, so the call that needs it asks again, except for the home list's first records. They
 * only stand in for the whole list while it loads (read after the connect, it holds every event
 * since) and the live events patch them once drawn, so the first cards still come in the shell's
 * first render.
 */
export function dropLandingAnswersOnConnect(): void {
  const preview = previewCall();
  dropPrefetched(preview ? [preview] : []);
}
