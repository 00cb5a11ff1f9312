/** Watching a running desktop: its thumbnail, and opening one of its viewers. */
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { ruleStates } from '../../../../common/state-actions.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import type { DesktopViewerAnswer, ViewerKey } from '../../../../src/generated/types.ts';
import { desktopStates } from '../../../../src/generated/policy.ts';
import { resourceOf } from '../../../../src/generated/resources.ts';
import { assertStateAllows } from './desktop-rules.ts';
import { VNC_WS_PATH } from '../../platform/viewers/vnc-proxy.ts';
import { RDP_WS_PATH } from '../../platform/viewers/rdp-tunnel.ts';

import type { DesktopContext } from './desktop-context.ts';
import type { OwnedDesktopRow } from './desktops-repository.ts';

/** States in which a desktop has a screen (thumbnails, consoles). */
export const VIEWER_STATES = ruleStates('desktops', 'viewer');
/** States on the way to `started`: a viewer asked for meanwhile waits for the start. */
const TOWARDS_STARTED: readonly string[] = desktopStates.towardsStarted;
/** How long a viewer call waits for a desktop on its way to `started`. */
export const VIEWER_START_WAIT_MS = 30_000;

/** The SPA route of the browser VNC viewer, from the desktops resource. */
const VNC_VIEWER_ROUTE = resourceOf('desktops')?.meta.extraRoutes.viewer ?? '/viewer/vnc/:id';
/** The SPA page of the browser RDP viewer (no login route: it reads the viewer cookie). */
const RDP_VIEWER_ROUTE = resourceOf('direct-viewer')?.meta.extraRoutes.rdp ?? '/rdp';

/** The latest screenshot of a running desktop, at most 3 s old while somebody watches it. */
export async function desktopThumbnail(
  ctx: DesktopContext,
  auth: AuthContext,
  id: string,
): Promise<Buffer> {
  const { app } = ctx;
  const desktop = await ctx.desktopFor(auth, id);
  if (!VIEWER_STATES.includes(desktop.state))
    throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
      status: 409,
    });
  let shot = app.idle.lastScreenshot(desktop.id);
  if (!shot || (app.idle.viewers(desktop.id) > 0 && Date.now() - shot.at.getTime() > 3000))
    shot = await app.idle.refreshScreenshot(desktop.id).catch(() => shot);
  if (!shot) throw new ApiError('not_found', 'No screenshot yet', 'not_found');
  return shot.png;
}

/**
 * The desktop once it is no longer on its way to `started` (starting, queued, its disk being
 * made), waiting at most `VIEWER_START_WAIT_MS` for its changes: a viewer opened together with the
 * start (the one-click Open) needs one call. Every read checks the caller's access again.
 */
async function desktopAfterStart(
  ctx: DesktopContext,
  auth: AuthContext,
  first: OwnedDesktopRow,
  ready: (desktop: OwnedDesktopRow) => boolean,
): Promise<OwnedDesktopRow> {
  const { id } = first;
  let desktop = first;
  const until = Date.now() + VIEWER_START_WAIT_MS;
  while (TOWARDS_STARTED.includes(desktop.state) && !ready(desktop) && Date.now() < until) {
    // Listening before the read again: a change between the two reads is not missed.
    const next = ctx.app.viewers.nextChange(desktop.id, until - Date.now());
    const again = await ctx.desktopFor(auth, id);
    if (again.version === desktop.version) await next.changed;
    next.cancel();
    desktop = await ctx.desktopFor(auth, id);
  }
  return desktop;
}

/**
 * A desktop whose start was accepted with its passwords: its browser VNC console can be issued
 * now (the proxy waits for QEMU), so the viewer page connects while the desktop boots.
 */
const bootingWithPassword = (desktop: OwnedDesktopRow): boolean =>
  desktop.state === 'starting' && typeof desktop.runtime.vncPassword === 'string';

/**
 * A viewer of a running desktop: a browser viewer's single-use ticket (bound to the caller's
 * login session), a SPICE file with a fresh password and tunnel credential, or an `.rdp` file.
 * The RDP viewers need the desktop's network address. A desktop on its way to `started` is waited
 * for (`desktopAfterStart`), but for the browser VNC console of a start that chose its passwords.
 */
export async function openViewer(
  ctx: DesktopContext,
  auth: AuthContext,
  id: string,
  viewer: ViewerKey,
): Promise<DesktopViewerAnswer> {
  const { app } = ctx;
  const asked = await ctx.desktopFor(auth, id);
  if (!configuredViewers(asked.guestProperties.viewers).includes(viewer))
    throw new ApiError(
      'not_found',
      `The desktop has no ${viewer} viewer`,
      'viewer_not_configured',
      { viewer },
    );
  const early = viewer === 'browser-vnc' ? bootingWithPassword : () => false;
  const desktop = await desktopAfterStart(ctx, auth, asked, early);
  const booting = early(desktop);
  if (!booting) assertStateAllows('viewer', desktop.state);
  const rt = desktop.runtime;
  const rdp = viewer === 'browser-rdp' || viewer === 'file-rdpgw' || viewer === 'file-rdpvpn';
  if (!booting && (!rt.vncPort || !rt.spicePort))
    throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
      status: 409,
    });
  if (rdp && !rt.ip)
    throw new ApiError(
      'conflict',
      'The desktop has no network address yet: RDP viewers need one',
      'viewer_no_address',
      { viewer },
      { status: 409 },
    );
  await app.desktops.update(desktop.id, { accessed: new Date() });
  if (viewer === 'browser-vnc' || viewer === 'browser-rdp') {
    const protocol = viewer === 'browser-vnc' ? 'vnc' : 'rdp';
    const { ticket, expiresAt } = app.viewers.tickets.issue({
      userId: auth.userId,
      sessionId: auth.sessionId,
      desktopId: desktop.id,
      protocol,
    });
    app.log.debug({ id: desktop.id, phase: 'viewer.ticket' }, 'console path');
    return {
      kind: 'browser' as const,
      protocol,
      viewer: protocol === 'vnc' ? VNC_VIEWER_ROUTE.replace(':id', desktop.id) : RDP_VIEWER_ROUTE,
      url: `${protocol === 'vnc' ? VNC_WS_PATH : RDP_WS_PATH}?ticket=${ticket}`,
      expires: Math.floor(expiresAt / 1000),
      values:
        protocol === 'vnc'
          ? { vmName: desktop.name, password: rt.vncPassword ?? '' }
          : { vmName: desktop.name },
    };
  }
  if (viewer === 'file-spice') return app.viewers.spiceFile(auth, desktop);
  return app.viewers.rdpFile(auth, desktop, viewer === 'file-rdpgw' ? 'rdpgw' : 'rdpvpn');
}
