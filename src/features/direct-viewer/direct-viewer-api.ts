/**
 * The direct-viewer calls (schema `direct-viewer`), for the public page and the owner's link modal.
 * The public calls never carry the visitor's own session (`token: null`): a link works the same
 * with or without a login in the browser, and a session never meets the link's answers. The
 * console ticket is asked with the viewer JWT the link handed out, never with a session.
 */
import type {
  DesktopViewerAnswer,
  DirectViewer,
  DirectViewerActionParams,
} from '@/generated/types';
import { resourceOf } from '@/generated/resources';
import { decodeToken, expiresWithin } from '@/lib/token';
import { request } from '@/providers/http-client';

/** Refused as "too many requests" (429): the HTTP client resolves such a call with null. */
export class RateLimitedError extends Error {
  constructor() {
    super('Too many requests');
    this.name = 'RateLimitedError';
  }
}

/** True for the rate-limit refusal of a direct call. */
export function isRateLimited(error: unknown): error is RateLimitedError {
  return error instanceof RateLimitedError;
}

/** `GET /direct/{token}`: the desktop of a link and a viewer JWT for it (never starts it). */
export async function fetchDirectViewer(
  token: string,
  signal?: AbortSignal,
): Promise<DirectViewer> {
  const answer = await request('direct-viewer.show', {
    params: { token },
    token: null,
    background: true,
    ...(signal ? { signal } : {}),
  });
  if (!answer) throw new RateLimitedError();
  return answer;
}

export type DirectAction = DirectViewerActionParams['action'];

/** `PUT /direct/{token}/{action}`: start, stop or reset the desktop of a link. */
export async function directAction(token: string, action: DirectAction): Promise<void> {
  const answer = await request('direct-viewer.action', { params: { token, action }, token: null });
  if (!answer) throw new RateLimitedError();
}

/**
 * `GET /direct/viewer/{desktopId}/browser-vnc` with the viewer JWT: a single-use console ticket.
 * @throws RateLimitedError when throttled
 */
export async function fetchDirectTicket(
  desktopId: string,
  jwt: string,
): Promise<DesktopViewerAnswer> {
  const answer = await request('direct-viewer.viewer', {
    params: { desktopId, protocol: 'browser-vnc' },
    token: jwt,
  });
  if (!answer) throw new RateLimitedError();
  return answer;
}

/** True when a viewer JWT is missing or ends within `withinMs` (ms) of `now`. */
export function jwtNearlyExpired(jwt: string | undefined, now = Date.now(), withinMs = 60_000) {
  const claims = decodeToken(jwt);
  return !claims || expiresWithin(claims, now, withinMs);
}

/** `GET /desktop/jumperurl/{id}`: whether the desktop has a link (its token is never kept). */
export async function fetchLinkEnabled(desktopId: string): Promise<boolean> {
  const answer = await request('direct-viewer.jumperUrl', { params: { domainId: desktopId } });
  if (!answer) throw new RateLimitedError();
  return Boolean(answer.jumperurl);
}

/**
 * `PUT /desktop/jumperurl_reset/{id}`: a new link (its token, answered only this once) or, with
 * `disabled`, none (null).
 * @throws RateLimitedError when a new link was asked for and none came back (throttled)
 */
export async function resetLink(desktopId: string, disabled: boolean): Promise<string | null> {
  const answer = await request('direct-viewer.resetJumperUrl', {
    params: { domainId: desktopId },
    body: { disabled },
  });
  if (disabled) return null;
  if (typeof answer !== 'string' || !answer) throw new RateLimitedError();
  return answer;
}

const SHOW_ROUTE = resourceOf('direct-viewer')?.show ?? '/vw/:jumperurl';

/** The public address of a link: `<origin>/vw/<token>`. */
export function linkUrl(token: string, origin: string = window.location.origin): string {
  return origin + SHOW_ROUTE.replace(':jumperurl', encodeURIComponent(token));
}
