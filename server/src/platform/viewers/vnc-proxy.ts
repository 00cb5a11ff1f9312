/**
 * Browser VNC through our own authenticated websocket proxy:
 * - the upgrade carries a single-use ticket (≤ 60 s) bound to user + desktop + protocol + login session;
 * - `Origin` must be the portal's own origin or one listed in ALLOWED_ORIGINS (scheme, host and
 *   port compared); none, or `null`, is refused;
 * - the target host/port come from the desktop record at connect time, never from the client;
 * - ≤ 4 sockets per desktop and ≤ 10 per user: a slot is reserved synchronously, before any await,
 *   so concurrent upgrades cannot overshoot; beyond the limit the upgrade gets 429; with several
 *   nodes a slot counted across them (`slot`) is taken too, so the limits hold for them together;
 * - a console closes at once when its session ends (logout, revocation, user disabled) or its
 *   desktop stops, is deleted or is no longer the user's to open.
 */
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TicketStore } from './tickets.ts';
import { upgradeRefusal } from '../http/rate-limit.ts';

export const VNC_WS_PATH = '/api/v3/viewer/vnc';
export const MAX_PER_DESKTOP = 4;
export const MAX_PER_USER = 10;
/** A revoked console that does not answer the close handshake is cut after this long (ms). */
const CLOSE_GRACE_MS = 500;

export interface VncTarget {
  /** The session is alive and its user may still open this desktop. */
  ownerOk: boolean;
  running: boolean;
  port: number | null;
}

export interface VncProxyDeps {
  tickets: TicketStore;
  /** Looks the desktop and session up now: may the user still open it, is it running, its VNC port. */
  target(desktopId: string, userId: string, sessionId: string): Promise<VncTarget>;
  /** The Origin check of browser websockets (platform/lib/origins.ts). */
  originAllowed(req: IncomingMessage): boolean;
  viewerAttached?(desktopId: string): Promise<void>;
  viewerDetached?(desktopId: string): void;
  /**
   * Takes a console slot counted across the nodes (the same limits), or answers undefined when
   * the user or the desktop is at its limit there.
   */
  slot?(userId: string, desktopId: string): Promise<{ release(): void } | undefined>;
  log: { warn(obj: object, msg?: string): void };
}

/** One console: a reserved slot from the ticket check until the socket closes. */
interface Lease {
  userId: string;
  sessionId: string;
  desktopId: string;
  ws?: WebSocket;
  tcp?: Socket;
  /** viewerAttached was called: viewerDetached is owed once. */
  attached: boolean;
  /** The slot counted across the nodes, given back with the lease. */
  shared?: { release(): void } | undefined;
  /** Released (closed, refused or revoked): the upgrade in flight must not go on. */
  done: boolean;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(upgradeRefusal(status, reason));
  socket.destroy();
}

export class VncProxy {
  private readonly byDesktop = new Map<string, Set<Lease>>();
  private readonly byUser = new Map<string, Set<Lease>>();
  private readonly rechecks = new Map<string, { again: boolean }>();

  constructor(private readonly deps: VncProxyDeps) {}

  /** Console sockets of a desktop (open or being opened). */
  count(desktopId: string): number {
    return this.byDesktop.get(desktopId)?.size ?? 0;
  }

  /** Login sessions that hold a console. */
  sessions(): Set<string> {
    const out = new Set<string>();
    for (const set of this.byUser.values()) for (const lease of set) out.add(lease.sessionId);
    return out;
  }

  /** Closes every console socket of a desktop (it stopped, was deleted, or changed owner). */
  closeDesktop(desktopId: string, reason = 'desktop stopped'): void {
    for (const lease of [...(this.byDesktop.get(desktopId) ?? [])]) this.end(lease, 1000, reason);
    this.deps.tickets.revokeDesktop(desktopId);
  }

  /** Closes every console opened from a login session and forgets its tickets (the session ended). */
  closeSession(sessionId: string): void {
    for (const set of [...this.byUser.values()])
      for (const lease of [...set])
        if (lease.sessionId === sessionId) this.end(lease, 1008, 'session ended');
    this.deps.tickets.revokeSession(sessionId);
  }

  /**
   * Looks again at every console of a desktop (its record changed: owner, state) and closes those
   * whose user may no longer open it. Overlapping calls for one desktop run one after the other.
   */
  recheck(desktopId: string): void {
    if (!this.byDesktop.has(desktopId)) return;
    const running = this.rechecks.get(desktopId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.rechecks.set(desktopId, state);
    const run = async (): Promise<void> => {
      do {
        state.again = false;
        for (const lease of [...(this.byDesktop.get(desktopId) ?? [])]) {
          if (lease.done) continue;
          const target = await this.deps.target(desktopId, lease.userId, lease.sessionId);
          if (!target.ownerOk) this.end(lease, 1008, 'not allowed');
          else if (!target.running) this.end(lease, 1000, 'desktop stopped');
        }
      } while (state.again);
    };
    void run()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'vnc console recheck failed'))
      .finally(() => this.rechecks.delete(desktopId));
  }

  /** Looks again at every console of a user (the account changed: role, group). */
  recheckUser(userId: string): void {
    const desktops = new Set([...(this.byUser.get(userId) ?? [])].map((l) => l.desktopId));
    for (const desktopId of desktops) this.recheck(desktopId);
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
    const lease = this.reserve(claims.userId, claims.desktopId, claims.sessionId);
    if (!lease) return refuse(socket, 429, 'Too Many Requests');
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

  private reserve(userId: string, desktopId: string, sessionId: string): Lease | undefined {
    const forDesktop = this.byDesktop.get(desktopId) ?? new Set<Lease>();
    const forUser = this.byUser.get(userId) ?? new Set<Lease>();
    if (forDesktop.size >= MAX_PER_DESKTOP || forUser.size >= MAX_PER_USER) return undefined;
    const lease: Lease = { userId, desktopId, sessionId, attached: false, done: false };
    forDesktop.add(lease);
    forUser.add(lease);
    this.byDesktop.set(desktopId, forDesktop);
    this.byUser.set(userId, forUser);
    return lease;
  }

  /**
   * Frees the slot of a lease (once), cuts its VNC connection and tells the idle manager the viewer
   * left (once). Safe to call again: an upgrade that was in flight calls it when it notices.
   */
  private release(lease: Lease): void {
    if (!lease.done) {
      lease.done = true;
      const forDesktop = this.byDesktop.get(lease.desktopId);
      forDesktop?.delete(lease);
      if (forDesktop?.size === 0) this.byDesktop.delete(lease.desktopId);
      const forUser = this.byUser.get(lease.userId);
      forUser?.delete(lease);
      if (forUser?.size === 0) this.byUser.delete(lease.userId);
    }
    lease.shared?.release();
    lease.shared = undefined;
    lease.tcp?.destroy();
    if (lease.attached) {
      lease.attached = false;
      this.deps.viewerDetached?.(lease.desktopId);
    }
  }

  /** Ends a console now: close frame to the browser, cut when it does not answer promptly. */
  private end(lease: Lease, code: number, reason: string): void {
    const { ws } = lease;
    this.release(lease);
    if (!ws) return; // an upgrade in flight sees `done` and is refused
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private async open(
    lease: Lease,
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): Promise<void> {
    if (this.deps.slot) {
      const shared = await this.deps.slot(lease.userId, lease.desktopId);
      if (!shared) {
        this.release(lease);
        return refuse(socket, 429, 'Too Many Requests');
      }
      lease.shared = shared;
      if (lease.done) {
        this.release(lease);
        return refuse(socket, 403, 'Forbidden');
      }
    }
    const target = await this.deps.target(lease.desktopId, lease.userId, lease.sessionId);
    if (lease.done || !target.ownerOk) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    if (!target.running || !target.port) {
      this.release(lease);
      return refuse(socket, 409, 'Conflict');
    }
    lease.attached = true;
    await this.deps.viewerAttached?.(lease.desktopId);
    if (lease.done) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    const tcp: Socket = connect({ host: '127.0.0.1', port: target.port });
    lease.tcp = tcp;
    tcp.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      tcp.once('connect', resolve);
      tcp.once('error', reject);
      tcp.once('close', () => reject(new Error('VNC connection closed')));
    });
    if (lease.done) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    wss.handleUpgrade(req, socket, head, (ws) => this.pipe(lease, ws, tcp));
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
    tcp.on('data', (chunk) => {
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
