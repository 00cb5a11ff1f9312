/**
 * Direct-viewer links (`/vw/<token>`): a desktop opened without login.
 *
 * - A link is 32 random bytes (256 bits, 43 base64url characters). Only its SHA-256 is stored
 *   (`desktops.jumperurl_hash`, unique): the token is shown once, when it is made, and can not be
 *   read back; a new one replaces the old one at once (the old link answers 404), and disabling
 *   removes it.
 * - Those who manage the desktop manage its link: its owner, an admin, a manager of its owner's
 *   category, and the people who manage its deployment.
 * - A link opens nothing while its desktop belongs to an invisible deployment or is hidden.
 * - Opening a link answers the desktop's name, description, state and viewers, and a viewer JWT
 *   (`type: viewer`, 30 min) for that desktop alone. The JWT is refused by every login route
 *   (special tokens are 403 there); it only obtains console tickets of ITS desktop while the link
 *   it came from is still the desktop's (a reset or disable ends it), through a console path of
 *   its own whose consoles close when the link changes or the desktop stops.
 * - The public calls are limited per client address (30 a minute); every failure of a token
 *   lookup is the same 404, answered no sooner than half a second after the request.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageDesktop } from '../../platform/lib/ownership.ts';
import { KID, ISSUER, type SpecialClaims } from '../../platform/auth/tokens.ts';
import { listeningPort, originAllowed, ownOrigins } from '../../platform/lib/origins.ts';
import { desktops, type DesktopRow } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { type OwnedDesktopRow, profilesOf, VIEWER_STATES } from '../desktops/index.ts';
import { TicketStore } from '../../platform/viewers/tickets.ts';
import { VncProxy } from '../../platform/viewers/vnc-proxy.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import { resourceOf } from '../../../../src/generated/resources.ts';
import type {
  DesktopViewerAnswer,
  DirectViewer,
  DirectViewerActionParams,
} from '../../../../src/generated/types.ts';
import { checkDesktopStart } from '../quotas/index.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';

/** The console path of direct viewers (their own proxy: no login session behind them). */
export const DIRECT_VNC_PATH = '/api/v3/viewer/direct-vnc';
/** Lifetime of the viewer JWT a link hands out (seconds). */
export const VIEWER_JWT_TTL_S = 30 * 60;
/** Public calls per client address and minute; beyond, the same 404 as an unknown link. */
export const DIRECT_RATE_LIMIT = 30;
const DIRECT_RATE_WINDOW_MS = 60_000;
/** A failed lookup answers no sooner than this after the request (ms). */
export const DIRECT_FAILURE_FLOOR_MS = 500;

const VNC_VIEWER_ROUTE = resourceOf('desktops')?.meta.extraRoutes.viewer ?? '/viewer/vnc/:id';

/** SHA-256 of a link token, as stored. */
export const hashLink = (token: string) => createHash('sha256').update(token).digest('hex');
/** What a viewer JWT carries of the link it came from: a digest of the stored hash. */
const linkMark = (hash: string) =>
  createHash('sha256').update(`link:${hash}`).digest('hex').slice(0, 32);

const notFound = () => new ApiError('not_found', 'Not found', 'not_found');

export interface ViewerClaims extends SpecialClaims {
  desktop_id: string;
  category_id: string;
  link: string;
}

export type DirectViewerService = ReturnType<typeof createDirectViewerService>;

export function createDirectViewerService(
  app: FastifyInstance,
  options: {
    /** True when the caller manages the deployment of this desktop (deployment service). */
    managesDeploymentOf(auth: AuthContext, desktop: DesktopRow): Promise<boolean>;
    /** True when the desktop's deployment (if any) and the desktop itself are visible. */
    isVisible(desktop: DesktopRow): Promise<boolean>;
  },
) {
  const port = () => listeningPort(app.server, app.config.port);

  const tickets = new TicketStore();
  /** Consoles of direct viewers: user = `direct:<desktop>`, session = the link mark. */
  const vnc = new VncProxy({
    tickets,
    log: app.log,
    originAllowed: (req) => originAllowed(req, app.config, port()),
    viewerAttached: (id) => app.idle.viewerAttached(id),
    viewerDetached: (id) => app.idle.viewerDetached(id),
    async target(desktopId, _userId, sessionId) {
      const row = await app.desktops.byId(desktopId);
      const ok = Boolean(
        row?.jumperurlHash &&
        linkMark(row.jumperurlHash) === sessionId &&
        (await options.isVisible(row)),
      );
      const running = Boolean(row && VIEWER_STATES.includes(row.state));
      const vncPort = (row?.runtime as { vncPort?: unknown } | undefined)?.vncPort;
      return {
        ownerOk: ok,
        running,
        port: running && typeof vncPort === 'number' ? vncPort : null,
      };
    },
  });
  app.upgrades.register(DIRECT_VNC_PATH, vnc.handleUpgrade);
  // Every node's direct consoles follow a desktop's writes, wherever they are made.
  app.cluster.on('desktop.changed', ({ id, change, state }) => {
    if (change === 'deleted') vnc.recheck(id);
    else if (change === 'updated') {
      if (!VIEWER_STATES.includes(state)) vnc.closeDesktop(id);
      else vnc.recheck(id);
    }
  });

  /** Sliding window of request times per client address. */
  const hits = new Map<string, number[]>();
  const limited = (ip: string, now = Date.now()): boolean => {
    const times = (hits.get(ip) ?? []).filter((t) => now - t < DIRECT_RATE_WINDOW_MS);
    times.push(now);
    hits.set(ip, times);
    if (hits.size > 10_000)
      for (const [k, v] of hits)
        if (v.every((t) => now - t >= DIRECT_RATE_WINDOW_MS)) hits.delete(k);
    return times.length > DIRECT_RATE_LIMIT;
  };

  /**
   * Runs a public call: over the rate limit, or on any failure to resolve the link, the same 404
   * no sooner than the floor.
   */
  const publicCall = async <T>(ip: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const fail = async (err: unknown): Promise<never> => {
      const wait = DIRECT_FAILURE_FLOOR_MS - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      throw err;
    };
    if (limited(ip)) return fail(notFound());
    try {
      return await work();
    } catch (err) {
      // A valid link may still meet a refusal of its own (quota, state): that one is told.
      if (err instanceof ApiError && err.kind !== 'not_found') throw err;
      return fail(err instanceof ApiError ? err : notFound());
    }
  };

  /** The desktop of a link, if the link exists and opens something now. */
  const desktopOfLink = async (token: string): Promise<OwnedDesktopRow> => {
    const rows = await app.desktops.table.list({
      where: eq(desktops.jumperurlHash, hashLink(token)),
    });
    const row = rows[0] ? await app.desktops.byId(rows[0].id) : undefined;
    if (!row || !(await options.isVisible(row))) throw notFound();
    return row;
  };

  /** The desktop whose link the caller manages: 404 unknown, 403 not theirs. */
  const managedDesktop = async (auth: AuthContext, id: string): Promise<OwnedDesktopRow> => {
    const row = await app.desktops.byId(id);
    if (!row) throw new ApiError('not_found', 'Desktop not found', 'not_found');
    if (canManageDesktop(auth, row) || (await options.managesDeploymentOf(auth, row))) return row;
    throw new ApiError('forbidden', 'Not enough rights on this desktop', 'forbidden');
  };

  /** Makes a new link for a desktop (the old one stops working at once) and returns it. */
  const issue = async (desktopId: string): Promise<string> => {
    const old = await app.desktops.table.get(desktopId);
    const token = randomBytes(32).toString('base64url');
    await app.desktops.table.update(desktopId, { jumperurlHash: hashLink(token) });
    if (old?.jumperurlHash) vnc.closeSession(linkMark(old.jumperurlHash));
    return token;
  };

  const disable = async (desktopId: string): Promise<void> => {
    const old = await app.desktops.table.get(desktopId);
    await app.desktops.table.update(desktopId, { jumperurlHash: null });
    if (old?.jumperurlHash) vnc.closeSession(linkMark(old.jumperurlHash));
  };

  const signViewerJwt = async (row: DesktopRow & { jumperurlHash: string }) => {
    const now = Math.floor(Date.now() / 1000);
    return app.tokens.signClaims({
      kid: KID,
      type: 'viewer',
      user_id: `direct:${row.id}`,
      desktop_id: row.id,
      category_id: row.categoryId,
      link: linkMark(row.jumperurlHash),
      iss: ISSUER,
      iat: now,
      nbf: now,
      exp: now + VIEWER_JWT_TTL_S,
    });
  };

  const scheduledShutdown = (scheduled: unknown): string | false => {
    const shutdown = (scheduled as { shutdown?: unknown } | null)?.shutdown;
    return typeof shutdown === 'string' ? shutdown : false;
  };

  /** The public answer about a desktop (never its owner, credentials or ports). */
  const answer = async (
    row: OwnedDesktopRow & { jumperurlHash: string },
  ): Promise<DirectViewer> => {
    const viewers = Object.fromEntries(
      configuredViewers(row.guestProperties.viewers)
        // A SPICE file needs a login session behind its tunnel credential: browsers only here.
        .filter((v) => v === 'browser-vnc')
        .map((v) => [v, { kind: 'browser', protocol: 'vnc' }]),
    );
    return {
      desktopId: row.id,
      jwt: await signViewerJwt(row),
      vmName: row.name,
      vmDescription: row.description,
      vmState: row.state,
      viewers,
      // The end of the booking in force, when the desktop will be stopped.
      scheduled: { shutdown: scheduledShutdown(row.scheduled) },
      needs_booking: profilesOf(row.hardware).length > 0,
      next_booking_start: row.nextBookingStart ? row.nextBookingStart.toISOString() : null,
      next_booking_end: row.nextBookingEnd ? row.nextBookingEnd.toISOString() : null,
      version: row.version,
    };
  };

  return {
    issue,
    disable,
    /** Closes what is left of the direct consoles (server closing). */
    close: () => {
      for (const id of [...vnc.sessions()]) vnc.closeSession(id);
    },

    /** GET /desktop/jumperurl/{id}: whether the desktop has a link (its token is never kept). */
    async linkState(auth: AuthContext, desktopId: string): Promise<{ jumperurl: boolean }> {
      const row = await managedDesktop(auth, desktopId);
      return { jumperurl: row.jumperurlHash !== null };
    },

    /** PUT /desktop/jumperurl_reset/{id}: a new link (answered once), or none when disabled. */
    async resetLink(
      auth: AuthContext,
      desktopId: string,
      disabled: boolean,
    ): Promise<string | null> {
      const row = await managedDesktop(auth, desktopId);
      if (disabled) {
        await disable(row.id);
        app.log.info({ desktop: row.id, agent: auth.userId }, 'direct-viewer link disabled');
        return null;
      }
      const token = await issue(row.id);
      app.log.info({ desktop: row.id, agent: auth.userId }, 'direct-viewer link reset');
      return token;
    },

    /** The public URL of a link (the SPA's /vw/ page on the portal's origin). */
    linkUrl(token: string): string {
      const origin = ownOrigins(app.config, port())[0] ?? '';
      const route = resourceOf('direct-viewer')?.show ?? '/vw/:jumperurl';
      return `${origin}${route.replace(':jumperurl', token)}`;
    },

    /** GET /direct/{token}: the desktop and a viewer JWT for it (the desktop is not started). */
    show(ip: string, token: string): Promise<DirectViewer> {
      return publicCall(ip, async () => {
        const row = await desktopOfLink(token);
        if (!row.jumperurlHash) throw notFound();
        app.log.info({ desktop: row.id }, 'direct-viewer access');
        return answer({ ...row, jumperurlHash: row.jumperurlHash });
      });
    },

    /** PUT /direct/{token}/{action}: start (within the owner's quota), stop or reset. */
    action(
      ip: string,
      token: string,
      action: DirectViewerActionParams['action'],
    ): Promise<{ id: string }> {
      return publicCall(ip, async () => {
        const row = await desktopOfLink(token);
        switch (action) {
          case 'start': {
            if (!inSet(desktopStates.startable, row.state)) break;
            const owner = await app.users.byId(row.userId);
            if (owner)
              await checkDesktopStart(
                app.database.query,
                {
                  userId: owner.id,
                  groupId: owner.groupId,
                  categoryId: owner.categoryId,
                  role: owner.role,
                },
                {
                  memory: Number(row.hardware.memory ?? 1),
                  vcpus: Number(row.hardware.vcpus ?? 1),
                },
              );
            await app.engine.start(row.id);
            break;
          }
          case 'stop':
            if (VIEWER_STATES.includes(row.state)) await app.engine.stop(row.id);
            break;
          case 'reset':
            if (VIEWER_STATES.includes(row.state)) await app.engine.reset(row.id);
            break;
        }
        app.log.info({ desktop: row.id, action }, 'direct-viewer action');
        return { id: row.id };
      });
    },

    /**
     * GET /direct/viewer/{desktopId}/browser-vnc with a viewer JWT: a single-use console ticket
     * for the desktop the JWT was issued for, while its link is still the one the JWT came from.
     */
    async viewer(claims: SpecialClaims | null, desktopId: string): Promise<DesktopViewerAnswer> {
      const viewerClaims = claims as ViewerClaims | null;
      if (viewerClaims?.type !== 'viewer' || typeof viewerClaims.desktop_id !== 'string')
        throw new ApiError('forbidden', 'A direct-viewer token is needed', 'forbidden');
      if (viewerClaims.desktop_id !== desktopId)
        throw new ApiError('forbidden', 'This token opens another desktop', 'forbidden');
      const row = await app.desktops.byId(desktopId);
      if (
        !row?.jumperurlHash ||
        linkMark(row.jumperurlHash) !== viewerClaims.link ||
        !(await options.isVisible(row))
      )
        throw notFound();
      const rt = row.runtime as { vncPort?: unknown; vncPassword?: unknown };
      if (!VIEWER_STATES.includes(row.state) || typeof rt.vncPort !== 'number')
        throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
          status: 409,
        });
      const { ticket, expiresAt } = tickets.issue({
        userId: `direct:${row.id}`,
        desktopId: row.id,
        protocol: 'vnc',
        sessionId: viewerClaims.link,
      });
      return {
        kind: 'browser',
        protocol: 'vnc',
        viewer: VNC_VIEWER_ROUTE.replace(':id', row.id),
        url: `${DIRECT_VNC_PATH}?ticket=${ticket}`,
        expires: Math.floor(expiresAt / 1000),
        values: {
          vmName: row.name,
          password: typeof rt.vncPassword === 'string' ? rt.vncPassword : '',
        },
      };
    },

    /** Open direct consoles of a desktop (tests, diagnostics). */
    consoles: (desktopId: string) => vnc.count(desktopId),
  };
}
