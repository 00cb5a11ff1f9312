/**
 * Browser RDP through guacd, over our own authenticated websocket (the Guacamole websocket
 * tunnel, subprotocol `guacamole`):
 * - the upgrade carries a single-use `rdp` ticket (≤ 60 s) bound to user + desktop + login
 *   session, and the same Origin rule as the VNC console; a missing, used or foreign ticket is
 *   refused with 401, a desktop the user may no longer open with 403;
 * - ≤ 4 consoles per desktop and ≤ 10 per user (./console-leases.ts), counted across the nodes
 *   too when there are several;
 * - the connection is made by the server, never by the client: the RDP host is the desktop's own
 *   address and the credentials its guest credentials, read from its record at connect time; the
 *   client chooses only the screen size, its dpi and the keyboard layout;
 * - the server performs the Guacamole handshake with guacd itself (`select rdp`, the `args` guacd
 *   asks for answered by `connect`), then relays whole instructions both ways and answers the
 *   client's keep-alive pings;
 * - what keeps a console from opening once its websocket is up (the desktop is not running or
 *   has no address, guacd is unreachable or refuses) reaches the page as a Guacamole `error`
 *   instruction whose message is an error code of the portal's catalogue;
 * - a console closes at once when its session ends (logout, revocation, user disabled) or its
 *   desktop stops, is deleted or is no longer the user's to open.
 */
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { TicketStore } from './tickets.ts';
import { upgradeRefusal } from '../http/rate-limit.ts';
import {
  GuacProtocolError,
  GuacStatus,
  INTERNAL_OPCODE,
  InstructionReader,
  encode,
  instructionQueue,
  type Instruction,
} from './guacamole-protocol.ts';
import { ConsoleLeases, type ConsoleLease, type ConsoleLeasesDeps } from './console-leases.ts';

export const RDP_WS_PATH = '/api/v3/viewer/rdp';
/** The RDP port of a desktop. */
export const RDP_PORT = 3389;
/** The Guacamole protocol version this tunnel speaks to guacd. */
export const GUAC_PROTOCOL_VERSION = 'VERSION_1_5_0';
/** A revoked console that does not answer the close handshake is cut after this long (ms). */
const CLOSE_GRACE_MS = 500;

/** Error codes the tunnel sends to the page (keys of the `errors` catalogue). */
export const RdpTunnelError = {
  notRunning: 'viewer_not_started',
  noAddress: 'viewer_no_address',
  serviceDown: 'rdp_service_not_running',
  refused: 'rdp_connection_refused',
} as const;

export interface RdpTarget {
  /** The session is alive and its user may still open this desktop. */
  ownerOk: boolean;
  running: boolean;
  /** The guest's network address; null while the desktop has none. */
  address: string | null;
  /** The desktop's guest credentials (empty when it has none). */
  credentials: { username: string; password: string };
}

export interface RdpTunnelDeps {
  tickets: TicketStore;
  /** A console slot counted across the nodes (see ConsoleLeasesDeps.slot). */
  slot?: ConsoleLeasesDeps['slot'];
  /** Looks the desktop and session up now: may the user open it, is it running, its address. */
  target(desktopId: string, userId: string, sessionId: string): Promise<RdpTarget>;
  /** The Origin check of browser websockets (platform/lib/origins.ts). */
  originAllowed(req: IncomingMessage): boolean;
  /** Where guacd listens. */
  guacd: { host: string; port: number };
  viewerAttached?(desktopId: string): Promise<void>;
  viewerDetached?(desktopId: string): void;
  log: { warn(obj: object, msg?: string): void };
  /** guacd must connect and complete the handshake within this (ms); default 10 s. */
  handshakeTimeoutMs?: number;
}

/** What the page asks for: the screen and the keyboard layout, nothing else. */
export interface RdpScreen {
  width: number;
  height: number;
  dpi: number;
  layout: string;
  timezone: string | null;
}

const clamp = (value: string | null, min: number, max: number, fallback: number): number => {
  if (!value || !/^\d{1,6}$/.test(value)) return fallback;
  return Math.min(max, Math.max(min, Number(value)));
};

/** The screen of an upgrade's query (`width`, `height`, `dpi`, `layout`, `timezone`), bounded. */
export function screenOf(query: URLSearchParams): RdpScreen {
  const layout = query.get('layout') ?? '';
  const timezone = query.get('timezone') ?? '';
  return {
    width: clamp(query.get('width'), 320, 7680, 1024),
    height: clamp(query.get('height'), 200, 4320, 768),
    dpi: clamp(query.get('dpi'), 48, 384, 96),
    layout: /^[a-z]{2}-[a-z]{2}-[a-z]{3,12}$/.test(layout) ? layout : 'en-us-qwerty',
    timezone: /^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+){0,2}$/.test(timezone) ? timezone : null,
  };
}

/** The values of the RDP connection arguments the tunnel sets; every other argument is empty. */
export function connectionArgs(target: RdpTarget, screen: RdpScreen): Record<string, string> {
  return {
    hostname: target.address ?? '',
    port: String(RDP_PORT),
    username: target.credentials.username,
    password: target.credentials.password,
    security: 'any',
    'ignore-cert': 'true',
    width: String(screen.width),
    height: String(screen.height),
    dpi: String(screen.dpi),
    'resize-method': 'display-update',
    'server-layout': screen.layout,
    'enable-font-smoothing': 'true',
    ...(screen.timezone ? { timezone: screen.timezone } : {}),
  };
}

/** One console: a reserved slot from the ticket check until the socket closes. */
interface Lease extends ConsoleLease {
  ws?: WebSocket;
  guacd?: Socket;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(upgradeRefusal(status, reason));
  socket.destroy();
}

/** Text of a websocket message. */
function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** guacd once it is ready: its socket, its reader and what was read past `ready`. */
interface Upstream {
  guacd: Socket;
  reader: InstructionReader;
  read: Instruction[];
}

class HandshakeError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class RdpTunnel extends ConsoleLeases<Lease> {
  constructor(private readonly deps: RdpTunnelDeps) {
    super(deps);
  }

  protected allowed(lease: Lease): Promise<RdpTarget> {
    return this.deps.target(lease.desktopId, lease.userId, lease.sessionId);
  }

  protected cut(lease: Lease): void {
    lease.guacd?.destroy();
  }

  /** `disconnect` to the page, close frame, cut when it does not answer promptly. */
  protected finish(lease: Lease): void {
    const { ws } = lease;
    if (!ws) return; // an upgrade in flight sees `done` and is refused
    if (ws.readyState === ws.OPEN) ws.send(encode('disconnect'));
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** Upgrade handler for RDP_WS_PATH. */
  handleUpgrade = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
  ): void => {
    if (!this.deps.originAllowed(req)) return refuse(socket, 403, 'Forbidden');
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const ticket = query.get('ticket') ?? '';
    const claims = ticket ? this.deps.tickets.consume(ticket, 'rdp') : undefined;
    if (!claims?.sessionId) return refuse(socket, 401, 'Unauthorized');
    const lease = this.reserve({
      userId: claims.userId,
      desktopId: claims.desktopId,
      sessionId: claims.sessionId,
      attached: false,
      done: false,
    });
    if (!lease) return refuse(socket, 429, 'Too Many Requests');
    socket.once('close', () => {
      if (!lease.ws) this.release(lease);
    });
    void this.open(lease, req, socket, head, wss, screenOf(query)).catch((err: unknown) => {
      const revoked = lease.done;
      if (lease.ws) {
        this.deps.log.warn({ err }, 'rdp console failed');
        return this.fail(lease, lease.ws, RdpTunnelError.serviceDown, GuacStatus.SERVER_ERROR);
      }
      this.release(lease);
      if (revoked) return refuse(socket, 403, 'Forbidden');
      this.deps.log.warn({ err }, 'rdp upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  };

  /** Tells the page why its console cannot open, then closes. */
  private fail(lease: Lease, ws: WebSocket, code: string, status: number): void {
    this.release(lease);
    if (ws.readyState === ws.OPEN) ws.send(encode('error', code, status));
    ws.close(1000);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private async open(
    lease: Lease,
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    wss: WebSocketServer,
    screen: RdpScreen,
  ): Promise<void> {
    const shared = await this.takeShared(lease);
    if (shared === 'full') return refuse(socket, 429, 'Too Many Requests');
    if (shared === 'gone') return refuse(socket, 403, 'Forbidden');
    const target = await this.deps.target(lease.desktopId, lease.userId, lease.sessionId);
    if (lease.done || !target.ownerOk) {
      this.release(lease);
      return refuse(socket, 403, 'Forbidden');
    }
    const ws = await new Promise<WebSocket>((resolve) =>
      wss.handleUpgrade(req, socket, head, resolve),
    );
    lease.ws = ws;
    if (lease.done) return this.end(lease, 'session ended');
    ws.on('close', () => this.release(lease));
    ws.on('error', () => this.release(lease));
    if (!target.running)
      return this.fail(lease, ws, RdpTunnelError.notRunning, GuacStatus.RESOURCE_CONFLICT);
    if (!target.address)
      return this.fail(lease, ws, RdpTunnelError.noAddress, GuacStatus.RESOURCE_NOT_FOUND);
    // What the page sends before the relay starts waits for it.
    const early: string[] = [];
    const keep = (data: RawData) => early.push(textOf(data));
    ws.on('message', keep);
    lease.attached = true;
    await this.deps.viewerAttached?.(lease.desktopId);
    if (lease.done) return this.end(lease, 'session ended');
    let upstream: Upstream;
    try {
      upstream = await this.handshake(lease, target, screen);
    } catch (err) {
      if (lease.done) return this.end(lease, 'session ended');
      if (err instanceof HandshakeError) return this.fail(lease, ws, err.code, err.status);
      throw err;
    }
    if (lease.done) return this.end(lease, 'session ended');
    ws.off('message', keep);
    this.relay(lease, ws, upstream, early);
  }

  /** Connects to guacd and performs the handshake for the desktop; resolves once guacd is ready. */
  private async handshake(lease: Lease, target: RdpTarget, screen: RdpScreen): Promise<Upstream> {
    const { host, port } = this.deps.guacd;
    const guacd = connect({ host, port });
    lease.guacd = guacd;
    guacd.setNoDelay(true);
    const timeoutMs = this.deps.handshakeTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new HandshakeError(
              RdpTunnelError.serviceDown,
              GuacStatus.UPSTREAM_TIMEOUT,
              'guacd did not answer',
            ),
          ),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        timeout,
        new Promise<void>((resolve, reject) => {
          guacd.once('connect', resolve);
          guacd.once('error', () =>
            reject(
              new HandshakeError(
                RdpTunnelError.serviceDown,
                GuacStatus.UPSTREAM_NOT_FOUND,
                'guacd is unreachable',
              ),
            ),
          );
        }),
      ]);
      const queue = instructionQueue(guacd);
      const expect = async (opcode: string): Promise<Instruction> => {
        let instruction: Instruction;
        try {
          instruction = await Promise.race([timeout, queue.next()]);
        } catch (err) {
          if (err instanceof HandshakeError) throw err;
          const status =
            err instanceof GuacProtocolError
              ? GuacStatus.UPSTREAM_ERROR
              : GuacStatus.UPSTREAM_UNAVAILABLE;
          throw new HandshakeError(RdpTunnelError.serviceDown, status, String(err));
        }
        if (instruction.opcode === 'error')
          throw new HandshakeError(
            RdpTunnelError.refused,
            Number(instruction.args[1]) || GuacStatus.UPSTREAM_ERROR,
            instruction.args[0] ?? 'guacd refused the connection',
          );
        if (instruction.opcode !== opcode)
          throw new HandshakeError(
            RdpTunnelError.serviceDown,
            GuacStatus.UPSTREAM_ERROR,
            `guacd sent ${instruction.opcode} instead of ${opcode}`,
          );
        return instruction;
      };
      guacd.write(encode('select', 'rdp'));
      const { args: names } = await expect('args');
      const values = connectionArgs(target, screen);
      guacd.write(
        [
          encode('size', screen.width, screen.height, screen.dpi),
          encode('audio', 'audio/L8', 'audio/L16'),
          encode('video'),
          encode('image', 'image/png', 'image/jpeg', 'image/webp'),
          ...(screen.timezone ? [encode('timezone', screen.timezone)] : []),
          encode(
            'connect',
            ...names.map((name) =>
              name.startsWith('VERSION_') ? GUAC_PROTOCOL_VERSION : (values[name] ?? ''),
            ),
          ),
        ].join(''),
      );
      await expect('ready');
      // The relay reads from here on, starting with what came after `ready`.
      return { guacd, ...queue.detach() };
    } finally {
      clearTimeout(timer);
    }
  }

  private relay(lease: Lease, ws: WebSocket, upstream: Upstream, early: readonly string[]): void {
    const { guacd, reader, read } = upstream;
    const close = () => {
      this.release(lease);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
    };
    const fromPage = (text: string) => {
      // The tunnel's own instructions (pings) are answered here, never passed to guacd.
      if (text.startsWith(`0.${INTERNAL_OPCODE},`)) {
        if (ws.readyState === ws.OPEN) ws.send(text);
        return;
      }
      guacd.write(text);
    };
    ws.send(encode(INTERNAL_OPCODE, randomUUID()) + read.map((i) => i.raw).join(''));
    guacd.on('data', (chunk: Buffer) => {
      let instructions: Instruction[];
      try {
        instructions = reader.push(chunk);
      } catch (err) {
        this.deps.log.warn({ err }, 'guacd sent a malformed instruction');
        return close();
      }
      if (instructions.length > 0 && ws.readyState === ws.OPEN)
        ws.send(instructions.map((i) => i.raw).join(''));
    });
    for (const text of early) fromPage(text);
    ws.on('message', (data) => fromPage(textOf(data)));
    guacd.on('close', close);
    guacd.on('error', close);
    ws.on('close', close);
    ws.on('error', close);
  }
}
