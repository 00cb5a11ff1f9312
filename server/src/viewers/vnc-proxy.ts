/**
 * Browser VNC through our own authenticated websocket proxy (threats T37-T44):
 * - the upgrade carries a single-use ticket (≤ 60 s) bound to user + desktop + protocol;
 * - `Origin` must be this portal's own origin (or one listed in ALLOWED_ORIGINS); none is refused;
 * - the target host/port come from the desktop record at connect time, never from the client;
 * - ≤ 4 sockets per desktop and ≤ 10 per user; every socket of a desktop closes when it stops.
 */
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TicketStore } from './tickets.ts';

export const VNC_WS_PATH = '/api/v3/viewer/vnc';
const MAX_PER_DESKTOP = 4;
const MAX_PER_USER = 10;

export interface VncTarget {
  ownerOk: boolean;
  running: boolean;
  port: number | null;
}

export interface VncProxyDeps {
  tickets: TicketStore;
  /** Looks the desktop up now: may the ticket's user still open it, is it running, its VNC port. */
  target(desktopId: string, userId: string): Promise<VncTarget>;
  /** Extra allowed origins besides the request's own host. */
  allowedOrigins: readonly string[];
  viewerAttached?(desktopId: string): Promise<void>;
  viewerDetached?(desktopId: string): void;
  log: { warn(obj: object, msg?: string): void };
}

function refuse(socket: Duplex, status: number, reason: string): void {
  if (socket.writable)
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/** Same-origin check: the Origin's host must be the Host header (or an allowed origin). */
export function originAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return false;
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

export class VncProxy {
  private readonly byDesktop = new Map<string, Set<WebSocket>>();
  private readonly byUser = new Map<string, number>();

  constructor(private readonly deps: VncProxyDeps) {}

  /** Open console sockets of a desktop. */
  count(desktopId: string): number {
    return this.byDesktop.get(desktopId)?.size ?? 0;
  }

  /** Closes every console socket of a desktop (it stopped, was deleted, or changed owner). */
  closeDesktop(desktopId: string): void {
    for (const ws of this.byDesktop.get(desktopId) ?? []) ws.close(1000, 'desktop stopped');
    this.deps.tickets.revokeDesktop(desktopId);
  }

  /** Upgrade handler for VNC_WS_PATH. */
  handleUpgrade = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): void => {
    void this.upgrade(req, socket, head, wss).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'vnc upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  };

  private async upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): Promise<void> {
    if (!originAllowed(req, this.deps.allowedOrigins)) return refuse(socket, 403, 'Forbidden');
    const ticket = new URL(req.url ?? '/', 'http://x').searchParams.get('ticket') ?? '';
    const claims = ticket ? this.deps.tickets.consume(ticket, 'vnc') : undefined;
    if (!claims) return refuse(socket, 401, 'Unauthorized');
    const target = await this.deps.target(claims.desktopId, claims.userId);
    if (!target.ownerOk) return refuse(socket, 403, 'Forbidden');
    if (!target.running || !target.port) return refuse(socket, 409, 'Conflict');
    if (
      this.count(claims.desktopId) >= MAX_PER_DESKTOP ||
      (this.byUser.get(claims.userId) ?? 0) >= MAX_PER_USER
    )
      return refuse(socket, 429, 'Too Many Requests');
    await this.deps.viewerAttached?.(claims.desktopId);
    const tcp: Socket = connect({ host: '127.0.0.1', port: target.port });
    tcp.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      tcp.once('connect', resolve);
      tcp.once('error', reject);
    }).catch((err: unknown) => {
      this.deps.viewerDetached?.(claims.desktopId);
      throw err;
    });
    wss.handleUpgrade(req, socket, head, (ws) =>
      this.pipe(ws, tcp, claims.desktopId, claims.userId),
    );
  }

  private pipe(ws: WebSocket, tcp: Socket, desktopId: string, userId: string): void {
    const set = this.byDesktop.get(desktopId) ?? new Set<WebSocket>();
    set.add(ws);
    this.byDesktop.set(desktopId, set);
    this.byUser.set(userId, (this.byUser.get(userId) ?? 0) + 1);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      set.delete(ws);
      if (set.size === 0) this.byDesktop.delete(desktopId);
      this.byUser.set(userId, Math.max(0, (this.byUser.get(userId) ?? 1) - 1));
      tcp.destroy();
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close();
      this.deps.viewerDetached?.(desktopId);
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
