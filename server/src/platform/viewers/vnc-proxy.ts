/**
 * Browser VNC through our own authenticated websocket proxy:
 * - the upgrade carries a single-use ticket (≤ 60 s) bound to user + desktop + protocol + login session;
 * - `Origin` must be the portal's own origin or one listed in ALLOWED_ORIGINS (scheme, host and
 *   port compared); none, or `null`, is refused;
 * - the target host/port come from the desktop record at connect time, never from the client (the
 *   host: the console address of the hypervisor host that runs the desktop; a desktop still
 *   starting: its port from the boot on this node once QEMU runs, else once it is started);
 * - ≤ 4 sockets per desktop and ≤ 10 per user (./console-leases.ts), counted across the nodes
 *   too when there are several; beyond the limit the upgrade gets 429;
 * - a console closes at once when its session ends (logout, revocation, user disabled) or its
 *   desktop stops, is deleted or is no longer the user's to open.
 */
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TicketStore } from './tickets.ts';
import { upgradeRefusal } from '../http/rate-limit.ts';
import {
  ConsoleLeases,
  MAX_PER_DESKTOP,
  MAX_PER_USER,
  type ConsoleLease,
  type ConsoleLeasesDeps,
  type EndReason,
} from './console-leases.ts';

export { MAX_PER_DESKTOP, MAX_PER_USER };

export const VNC_WS_PATH = '/api/v3/viewer/vnc';
/** A revoked console that does not answer the close handshake is cut after this long (ms). */
const CLOSE_GRACE_MS = 500;

export interface VncTarget {
  /** The session is alive and its user may still open this desktop. */
  ownerOk: boolean;
  /** It has a screen, or is `starting` (a console opened with the start stays). */
  running: boolean;
  /** Where the desktop's VNC listens (its hypervisor host's console address); absent: 127.0.0.1. */
  host?: string;
  /** On its way to `started`: its port may come (`nextChange`). */
  starting?: boolean;
  port: number | null;
}

/** How long an upgrade waits for the VNC port of a desktop that is starting (ms). */
export const START_WAIT_MS = 30_000;

export interface VncProxyDeps {
  tickets: TicketStore;
  /** A console slot counted across the nodes (see ConsoleLeasesDeps.slot). */
  slot?: ConsoleLeasesDeps['slot'];
  /** Looks the desktop and session up now: may the user still open it, is it running, its VNC port. */
  target(desktopId: string, userId: string, sessionId: string): Promise<VncTarget>;
  /**
   * Resolves at the desktop's next change (its row, or its VNC port on this node) or after
   * `timeoutMs`; without it an upgrade does not wait for a starting desktop.
   */
  nextChange?(desktopId: string, timeoutMs: number): { changed: Promise<void>; cancel(): void };
  /** The Origin check of browser websockets (platform/lib/origins.ts). */
  originAllowed(req: IncomingMessage): boolean;
  viewerAttached?(desktopId: string): Promise<void>;
  viewerDetached?(desktopId: string): void;
  log: {
    warn(obj: object, msg?: string): void;
    /** The console path's timings (`phase`, `id`), read by `scripts/bench/desktop.ts`. */
    debug?(obj: object, msg?: string): void;
  };
}

/** One console: a reserved slot from the ticket check until the socket closes. */
interface Lease extends ConsoleLease {
  ws?: WebSocket;
  tcp?: Socket;
  /** Ends the wait of an upgrade for a starting desktop (the lease was released meanwhile). */
  wake?: () => void;
}

/** The close frame of each way a console ends. */
const CLOSE_CODES: Record<EndReason, number> = {
  'desktop stopped': 1000,
  'session ended': 1008,
  'not allowed': 1008,
};

function refuse(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(upgradeRefusal(status, reason));
  socket.destroy();
}

export class VncProxy extends ConsoleLeases<Lease> {
  constructor(private readonly deps: VncProxyDeps) {
    super(deps);
  }

  protected allowed(lease: Lease): Promise<VncTarget> {
    return this.deps.target(lease.desktopId, lease.userId, lease.sessionId);
  }

  protected cut(lease: Lease): void {
    lease.wake?.();
    lease.tcp?.destroy();
  }

  /** Close frame to the browser, cut when it does not answer promptly. */
  protected finish(lease: Lease, reason: EndReason): void {
    const { ws } = lease;
    if (!ws) return; // an upgrade in flight sees `done` and is refused
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING)
      ws.close(CLOSE_CODES[reason], reason);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private trace(lease: Lease, phase: string): void {
    this.deps.log.debug?.({ id: lease.desktopId, phase }, 'console path');
  }

  /** Upgrade handler for VNC_WS_PATH. */
  handleUpgrade = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): void => {
    if (!this.deps.originAllowed(req)) return refuse(socket, 403, 'Forbidden');
    const ticket = new URL(req.url ?? '/', 'http://x').searchParams.get('ticket') ?? '';
    const claims = ticket ? this.deps.tickets.consume(ticket, 'vnc') : undefined;
    if (!claims?.sessionId) return refuse(socket, 401, 'Unauthorized');
    // Reserved now, synchronously: the limits count this upgrade before anything is awaited.
    const lease = this.reserve({
      userId: claims.userId,
      desktopId: claims.desktopId,
      sessionId: claims.sessionId,
      attached: false,
      done: false,
    });
    if (!lease) return refuse(socket, 429, 'Too Many Requests');
    this.trace(lease, 'vnc.upgrade');
    socket.once('close', () => {
      if (!lease.ws) this.release(lease);
    });
    void this.open(lease, req, socket, head, wss).catch((err: unknown) => {
      const revoked = lease.done;
      this.release(lease);
      if (revoked) return refuse(socket, 403, 'Forbidden');
      this.deps.log.warn({ err }, 'vnc upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  };

  private async open(
    lease: Lease,
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): Promise<void> {
    const shared = await this.takeShared(lease);
    if (shared === 'full') return refuse(socket, 429, 'Too Many Requests');
    if (shared === 'gone') return refuse(socket, 403, 'Forbidden');
    const target = await this.portOf(lease);
    if (lease.done || !target.ownerOk) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    if (!target.running || !target.port) {
      this.release(lease);
      return refuse(socket, 409, 'Conflict');
    }
    this.trace(lease, 'vnc.checked');
    lease.attached = true;
    await this.deps.viewerAttached?.(lease.desktopId);
    this.trace(lease, 'vnc.resumed');
    if (lease.done) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    const tcp: Socket = connect({ host: target.host ?? '127.0.0.1', port: target.port });
    lease.tcp = tcp;
    tcp.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      tcp.once('connect', resolve);
      tcp.once('error', reject);
      tcp.once('close', () => reject(new Error('VNC connection closed')));
    });
    this.trace(lease, 'vnc.connected');
    if (lease.done) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    wss.handleUpgrade(req, socket, head, (ws) => this.pipe(lease, ws, tcp));
  }

  /**
   * The desktop as the console finds it; one that is starting is waited for (at most
   * `START_WAIT_MS`) until its VNC port is known: the upgrade made while QEMU boots connects as
   * soon as QEMU answers with the start's password set.
   */
  private async portOf(lease: Lease): Promise<VncTarget> {
    const until = Date.now() + START_WAIT_MS;
    for (;;) {
      // Listening before the read: a change between the two is not missed.
      const next = this.deps.nextChange?.(lease.desktopId, until - Date.now());
      const target = await this.deps.target(lease.desktopId, lease.userId, lease.sessionId);
      const waits = target.ownerOk && target.starting === true && !target.port;
      if (!next || !waits || lease.done || Date.now() >= until) {
        next?.cancel();
        return target;
      }
      lease.wake = next.cancel;
      await next.changed;
      lease.wake = undefined;
    }
  }

  private pipe(lease: Lease, ws: WebSocket, tcp: Socket): void {
    lease.ws = ws;
    if (lease.done) {
      ws.close(1008, 'session ended');
      tcp.destroy();
      return;
    }
    const close = () => {
      this.release(lease);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
    };
    this.trace(lease, 'vnc.open');
    let first = true;
    tcp.on('data', (chunk) => {
      if (first) {
        first = false;
        this.trace(lease, 'vnc.first-byte');
      }
      if (ws.readyState === ws.OPEN) ws.send(chunk);
    });
    ws.on('message', (data) => {
      if (Array.isArray(data)) for (const d of data) tcp.write(d);
      else tcp.write(Buffer.from(data as ArrayBuffer));
    });
    tcp.on('close', close);
    tcp.on('error', close);
    ws.on('close', close);
    ws.on('error', close);
  }
}
