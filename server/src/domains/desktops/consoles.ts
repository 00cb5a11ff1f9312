/**
 * Console access paths of running desktops: single-use tickets and the VNC websocket proxy, the
 * RDP tunnel to guacd, the SPICE CONNECT tunnel and the `.vv` files that carry its credentials,
 * the `.rdp` files, and what closes them.
 *
 * A console (VNC or RDP websocket, SPICE tunnel) belongs to the login session that asked for it and
 * closes within a second of, on whichever node the change is made (the cluster bus):
 * - that session ending (logout, revocation, user disabled): the sessions repository's
 *   revocation;
 * - its desktop stopping, being deleted, or no longer being the user's to open (a new owner, a
 *   deployment desktop its deployment hides from its user included): the desktop's
 *   `desktop.changed`, after which each of its consoles is checked again;
 * - its user's account changing (role, group): each of the user's consoles is checked again;
 * and, for what this node hears of no message (a notification missed, the absolute session end),
 * at the next sweep (`socketSweepMs`).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageDesktop } from '../../platform/lib/ownership.ts';
import {
  listeningPort,
  originAllowed,
  publicAddress,
  type OriginSettings,
} from '../../platform/lib/origins.ts';
import { HypervisorError } from '../../platform/hypervisor/types.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import type { Hypervisor } from '../../platform/hypervisor/types.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { DesktopRow } from '../../platform/db/schema.ts';
import type { FileDownload } from '../../../../src/generated/types.ts';
import { TicketStore } from '../../platform/viewers/tickets.ts';
import {
  MAX_PER_DESKTOP,
  MAX_PER_USER,
  VncProxy,
  VNC_WS_PATH,
} from '../../platform/viewers/vnc-proxy.ts';
import { SpiceTunnel } from '../../platform/viewers/spice-tunnel.ts';
import { rdpFile, spiceFile } from '../../platform/viewers/viewer-files.ts';
import { RdpTunnel, RDP_WS_PATH } from '../../platform/viewers/rdp-tunnel.ts';
import { readSpicePki } from '../../platform/hypervisor/spice-pki.ts';

export interface Consoles {
  tickets: TicketStore;
  vnc: VncProxy;
  spice: SpiceTunnel;
  rdp: RdpTunnel;
  /**
   * The `.vv` of a running desktop for this caller: a fresh SPICE password (set over QMP, admitting
   * new connections only while the file's tunnel credential may open a session) and a tunnel
   * credential bound to the caller's user and session, the desktop and its SPICE port.
   */
  spiceFile(auth: AuthContext, desktop: DesktopRow): Promise<FileDownload>;
  /**
   * The `.rdp` of a running desktop with an address: over the users' VPN (`rdpvpn`), or through
   * the RD gateway (`rdpgw`) with a single-use gateway ticket bound to the caller's session.
   */
  rdpFile(auth: AuthContext, desktop: DesktopRow, via: 'rdpvpn' | 'rdpgw'): FileDownload;
  /** Closes every console of a desktop (it stopped or was deleted). */
  closeDesktop(desktopId: string): void;
  /**
   * Resolves at the desktop's next change (written on any node: the cluster bus) or after
   * `timeoutMs`, whichever comes first; `cancel` resolves it at once.
   */
  nextChange(desktopId: string, timeoutMs: number): { changed: Promise<void>; cancel: () => void };
  /**
   * A booting desktop's VNC port on this node once QEMU runs with its password set, null once
   * the boot is over: a VNC console opened with the start connects to it while the desktop is
   * still `starting` (on another node it waits for `started`).
   */
  vncReady(desktopId: string, vncPort: number | null): void;
}

/** The SPICE password of one `.vv`: 24 URL-safe characters (SPICE takes at most 59). */
const spicePassword = () => randomBytes(18).toString('base64url');
/** The kinds of the console slots counted across nodes (app.slots), VNC and RDP apart as here. */
export const VNC_CONSOLE_SLOT = 'vnc-console';
export const RDP_CONSOLE_SLOT = 'rdp-console';

export function createConsoles(
  app: FastifyInstance,
  options: { driver: Hypervisor; idle: IdleManager; consoleStates: readonly string[] },
): Consoles {
  const { config } = app;
  const { driver, idle, consoleStates } = options;
  const originSettings: OriginSettings = config;
  const port = () => listeningPort(app.server, config.port);
  /** Who waits for the next change of each desktop. */
  const waiters = new Map<string, Set<() => void>>();
  const nextChange = (desktopId: string, timeoutMs: number) => {
    let cancel = (): void => undefined;
    const changed = new Promise<void>((resolve) => {
      const set = waiters.get(desktopId) ?? new Set<() => void>();
      waiters.set(desktopId, set);
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && waiters.get(desktopId) === set) waiters.delete(desktopId);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      set.add(done);
      cancel = done;
    });
    return { changed, cancel };
  };
  const wake = (desktopId: string) => {
    for (const done of [...(waiters.get(desktopId) ?? [])]) done();
  };
  /** The VNC ports of the desktops this node is booting, once their QEMU runs. */
  const booting = new Map<string, number>();
  /** Consoles stay in the states with a screen and in `starting` (a VNC console waits for it). */
  const keepsConsoles = (state: string) => consoleStates.includes(state) || state === 'starting';

  /** What a console's session may do with a desktop now, and the desktop's console ports. */
  const access = async (desktopId: string, userId: string, sessionId: string) => {
    const [row, session] = await Promise.all([
      app.desktops.byId(desktopId),
      app.sessions.alive(sessionId),
    ]);
    const caller = session
      ? { userId: session.userId, role: session.role, categoryId: session.categoryId }
      : null;
    // Who may open the console is who may ask for its ticket (desktop-service `desktopFor`): the
    // desktop's manager, or, for a deployment desktop, whoever manages its deployment (owner,
    // co-owners: the videowall); and the user of a deployment desktop only while it is visible
    // (a ticket issued before the deployment was hidden opens nothing).
    const allowed = Boolean(
      row &&
      caller &&
      caller.userId === userId &&
      (canManageDesktop(caller, row) ||
        (row.tag && (await app.deploymentService.managesDeploymentOf(caller, row)))) &&
      (await app.deploymentService.assertDesktopUsable(caller, row).then(
        () => true,
        (err: unknown) => {
          if (err instanceof ApiError) return false;
          throw err;
        },
      )),
    );
    const running = Boolean(row && consoleStates.includes(row.state));
    const starting = row?.state === 'starting';
    const rt = (row?.runtime ?? {}) as {
      vncPort?: unknown;
      spicePort?: unknown;
      ip?: unknown;
      consoleHost?: unknown;
    };
    const portOf = (v: unknown) => (running && typeof v === 'number' ? v : null);
    const credentials = row?.guestProperties.credentials;
    return {
      allowed,
      running,
      starting,
      vncPort: portOf(rt.vncPort) ?? (starting ? (booting.get(desktopId) ?? null) : null),
      spicePort: portOf(rt.spicePort),
      // Where the desktop's host listens for its consoles (its console address).
      consoleHost:
        typeof rt.consoleHost === 'string' && rt.consoleHost ? rt.consoleHost : '127.0.0.1',
      address: running && typeof rt.ip === 'string' && rt.ip ? rt.ip : null,
      credentials: {
        username: credentials?.username ?? '',
        password: credentials?.password ?? '',
      },
    };
  };

  /** The same limits counted over every node, one kind of console apart from the other. */
  const sharedSlot =
    (kind: string) =>
    async (userId: string, desktopId: string): Promise<{ release(): void } | undefined> => {
      const answer = await app.slots.take(
        kind,
        { userId, itemId: desktopId },
        { perUser: MAX_PER_USER, perItem: MAX_PER_DESKTOP },
      );
      return 'slot' in answer ? answer.slot : undefined;
    };
  const tickets = new TicketStore();
  const vnc = new VncProxy({
    tickets,
    log: app.log,
    originAllowed: (req) => originAllowed(req, originSettings, port()),
    viewerAttached: (id) => idle.viewerAttached(id),
    viewerDetached: (id) => idle.viewerDetached(id),
    async target(desktopId, userId, sessionId) {
      const a = await access(desktopId, userId, sessionId);
      return {
        ownerOk: a.allowed,
        running: a.running || a.starting,
        starting: a.starting,
        host: a.consoleHost,
        port: a.vncPort,
      };
    },
    nextChange,
    slot: sharedSlot(VNC_CONSOLE_SLOT),
  });
  app.upgrades.register(VNC_WS_PATH, vnc.handleUpgrade);

  const rdp = new RdpTunnel({
    tickets,
    log: app.log,
    guacd: config.guacd,
    originAllowed: (req) => originAllowed(req, originSettings, port()),
    viewerAttached: (id) => idle.viewerAttached(id),
    viewerDetached: (id) => idle.viewerDetached(id),
    slot: sharedSlot(RDP_CONSOLE_SLOT),
    async target(desktopId, userId, sessionId) {
      const a = await access(desktopId, userId, sessionId);
      return {
        ownerOk: a.allowed,
        running: a.running,
        address: a.address,
        credentials: a.credentials,
      };
    },
  });
  app.upgrades.register(RDP_WS_PATH, rdp.handleUpgrade);

  const spice = new SpiceTunnel({
    log: app.log,
    credentialTtlMs: config.spiceCredentialTtlMs,
    channelWindowMs: config.spiceChannelWindowMs,
    viewerAttached: (id) => idle.viewerAttached(id),
    viewerDetached: (id) => idle.viewerDetached(id),
    async target(desktopId, userId, sessionId) {
      const a = await access(desktopId, userId, sessionId);
      return { allowed: a.allowed, host: a.consoleHost, port: a.spicePort };
    },
  });
  app.server.on('connect', spice.handleConnect);

  const closeDesktop = (desktopId: string) => {
    vnc.closeDesktop(desktopId);
    rdp.closeDesktop(desktopId);
    spice.closeDesktop(desktopId);
  };

  app.sessions.onRevoke((sessionId) => {
    vnc.closeSession(sessionId);
    rdp.closeSession(sessionId);
    spice.closeSession(sessionId);
  });

  app.cluster.on('desktop.changed', ({ id, change, state }) => {
    wake(id);
    if (change === 'deleted') closeDesktop(id);
    else if (change === 'updated') {
      if (!keepsConsoles(state)) closeDesktop(id);
      else {
        vnc.recheck(id);
        rdp.recheck(id);
        spice.recheck(id);
      }
    }
  });
  app.cluster.on('user.changed', ({ userId }) => {
    vnc.recheckUser(userId);
    rdp.recheckUser(userId);
    spice.recheckUser(userId);
  });

  let sweeping = false;
  const sweep = async () => {
    const ids = new Set([...vnc.sessions(), ...rdp.sessions(), ...spice.sessions()]);
    if (sweeping || ids.size === 0) return;
    sweeping = true;
    try {
      for (const id of ids) {
        if (await app.sessions.alive(id)) continue;
        vnc.closeSession(id);
        rdp.closeSession(id);
        spice.closeSession(id);
      }
    } catch (err) {
      app.log.warn({ err }, 'console sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), config.socketSweepMs);
  timer.unref();
  // Before the HTTP server closes: it waits for every open connection, SPICE tunnels included.
  app.addHook('preClose', async () => {
    clearInterval(timer);
    app.server.off('connect', spice.handleConnect);
    spice.closeAll();
    rdp.closeAll();
  });

  return {
    tickets,
    vnc,
    spice,
    rdp,
    closeDesktop,
    rdpFile(auth, desktop, via) {
      const ip = desktop.runtime.ip;
      if (!ip)
        throw new ApiError(
          'conflict',
          'The desktop has no network address yet',
          'viewer_no_address',
          null,
          { status: 409 },
        );
      const credentials = desktop.guestProperties.credentials;
      const address = publicAddress(originSettings, port());
      const gateway =
        via === 'rdpgw'
          ? {
              host: address.hostname,
              port: address.port,
              accessToken: tickets.issue({
                userId: auth.userId,
                sessionId: auth.sessionId,
                desktopId: desktop.id,
                protocol: 'rdpgw',
              }).ticket,
            }
          : undefined;
      return {
        kind: 'file',
        protocol: via,
        name: via === 'rdpgw' ? 'vdi-rdp-gw' : 'vdi-rdp-vpn',
        ext: 'rdp',
        mime: 'application/x-rdp',
        content: rdpFile({
          address: ip,
          username: credentials?.username ?? '',
          password: credentials?.password ?? '',
          ...(gateway ? { gateway } : {}),
        }),
      };
    },
    nextChange,
    vncReady(desktopId, vncPort) {
      if (vncPort === null) booting.delete(desktopId);
      else booting.set(desktopId, vncPort);
      wake(desktopId);
    },
    async spiceFile(auth, desktop) {
      const rt = (desktop.runtime ?? {}) as { spicePort?: unknown; spiceTls?: unknown };
      const notRunning = () =>
        new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
          status: 409,
        });
      if (typeof rt.spicePort !== 'number') throw notRunning();
      const password = spicePassword();
      const validForSeconds = Math.ceil(
        (config.spiceCredentialTtlMs + config.spiceChannelWindowMs) / 1000,
      );
      try {
        await driver.setPasswords(desktop.id, { spice: password }, { validForSeconds });
      } catch (err) {
        if (err instanceof HypervisorError && err.code === 'not_running') throw notRunning();
        throw err;
      }
      const credential = spice.issue({
        userId: auth.userId,
        sessionId: auth.sessionId,
        desktopId: desktop.id,
        port: rt.spicePort,
      });
      const tls = rt.spiceTls === true ? await readSpicePki(config.dataDir) : null;
      if (rt.spiceTls === true && !tls)
        throw new ApiError(
          'service_unavailable',
          'The SPICE certificates of this portal are missing',
          'service_unavailable',
        );
      const address = publicAddress(originSettings, port());
      return {
        kind: 'file',
        protocol: 'spice',
        name: 'vdi-spice',
        ext: 'vv',
        mime: 'application/x-virt-viewer',
        content: spiceFile({
          desktopName: desktop.name,
          proxyScheme: address.protocol,
          proxyHost: address.hostname,
          proxyPort: address.port,
          proxyCredential: { username: credential.username, secret: credential.secret },
          spiceHost: '127.0.0.1',
          spicePort: rt.spicePort,
          tls: tls ? { caCertPem: tls.caCertPem, hostSubject: tls.hostSubject } : undefined,
          password,
          fullscreen: desktop.guestProperties.fullscreen === true,
        }),
      };
    },
  };
}
