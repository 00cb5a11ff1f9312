/**
 * The HTTP CONNECT tunnel SPICE clients (remote-viewer / spice-gtk) use to reach the SPICE listener
 * of a desktop (on loopback, or the console address of the hypervisor host that runs it), through
 * the portal's own port. The client always names 127.0.0.1 (its `.vv` does): the tunnel connects to
 * where the desktop's record says its SPICE listens.
 *
 * Credentials: every `.vv` download mints one, written as the userinfo of the file's
 * `proxy=http://<id>:<secret>@host:port` line; spice-gtk sends it back on each CONNECT as
 * `Proxy-Authorization: Basic base64(<id>:<secret>)`. A credential is bound to the user, the login
 * session, the desktop and the desktop's SPICE port at download time; 256 random bits, kept in
 * memory only as a SHA-256 hash. A new download for the same user and desktop replaces the unused
 * credentials of earlier ones.
 *
 * Single use, per SPICE session: a SPICE session opens one TCP connection per channel (main,
 * display, inputs, cursor, playback, record, usbredir, ...), each through its own CONNECT. So:
 * - before its first use a credential is valid for `credentialTtlMs` after the download;
 * - the first CONNECT that passes consumes it: it binds the credential to that client's address
 *   and opens the session's channel window (`channelWindowMs` from that moment);
 * - further CONNECTs are accepted only from the same address, during that window, at most
 *   MAX_CHANNELS in all; once the window has passed the credential is gone.
 * Open tunnels close when the session that downloaded the file ends (logout, revocation, user
 * disabled) or when the desktop stops or is no longer the user's to open.
 *
 * Answers, so that nothing tells whether a port exists: no, malformed, unknown, expired or used-up
 * credential -> 407 (whatever the target); a valid credential but a target other than its own
 * desktop's SPICE port on this host, or a desktop no longer running there or no longer allowed ->
 * 403, decided before any connection is attempted. The target is never taken from the client
 * beyond being compared with the credential.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Most channels one SPICE session opens (main, display, inputs, cursor, audio, usbredir, ...). */
export const MAX_CHANNELS = 16;
const REALM = 'vdi-spice';
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost'];

export interface SpiceGrant {
  userId: string;
  sessionId: string;
  desktopId: string;
  /** The desktop's SPICE port when the file was downloaded. */
  port: number;
}

export interface SpiceTarget {
  /** The session is alive and its user may still open this desktop. */
  allowed: boolean;
  /** Where the desktop's SPICE listens (its hypervisor host's console address); absent: 127.0.0.1. */
  host?: string;
  /** The desktop's SPICE port while it runs, else null. */
  port: number | null;
}

export interface SpiceTunnelDeps {
  /** Looks the desktop and session up now. */
  target(desktopId: string, userId: string, sessionId: string): Promise<SpiceTarget>;
  credentialTtlMs: number;
  channelWindowMs: number;
  /** An open tunnel counts as a viewer (the idle manager keeps the guest running meanwhile). */
  viewerAttached?(desktopId: string): Promise<void>;
  viewerDetached?(desktopId: string): void;
  log: { warn(obj: object, msg?: string): void };
}

interface Credential extends SpiceGrant {
  secretHash: Buffer;
  expiresAt: number;
  /** Set by the first CONNECT: the SPICE session the credential now belongs to. */
  session: { remote: string; until: number; channels: number } | null;
}

interface Tunnel extends SpiceGrant {
  client: Duplex;
  upstream?: Socket;
  /** viewerAttached was called: viewerDetached is owed once. */
  attached: boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

function answer(socket: Duplex, status: 403 | 407): void {
  const head =
    status === 407
      ? `HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="${REALM}"\r\n`
      : 'HTTP/1.1 403 Forbidden\r\n';
  if (socket.writable) socket.end(`${head}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/** `Basic base64(id:secret)` -> [id, secret]. */
function basicCredentials(header: string | undefined): [string, string] | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,512})\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i > 0 ? [decoded.slice(0, i), decoded.slice(i + 1)] : undefined;
}

/** `host:port` of a CONNECT request line. */
function targetOf(url: string | undefined): { host: string; port: number } | undefined {
  const m = /^([^:\s]+):(\d{1,5})$/.exec(url ?? '');
  if (!m?.[1] || !m[2]) return undefined;
  const port = Number(m[2]);
  return port > 0 && port <= 65535 ? { host: m[1].toLowerCase(), port } : undefined;
}

export class SpiceTunnel {
  private readonly credentials = new Map<string, Credential>();
  private readonly tunnels = new Set<Tunnel>();

  constructor(private readonly deps: SpiceTunnelDeps) {}

  /** Mints the credential of a `.vv` download; the plain secret is returned once. */
  issue(
    grant: SpiceGrant,
    now = Date.now(),
  ): { username: string; secret: string; expiresAt: number } {
    this.sweep(now);
    for (const [id, c] of this.credentials)
      if (!c.session && c.userId === grant.userId && c.desktopId === grant.desktopId)
        this.credentials.delete(id);
    const username = randomBytes(16).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = now + this.deps.credentialTtlMs;
    this.credentials.set(username, {
      ...grant,
      secretHash: sha256(secret),
      expiresAt,
      session: null,
    });
    return { username, secret, expiresAt };
  }

  /** Open tunnels (tests, metrics). */
  count(desktopId?: string): number {
    let n = 0;
    for (const t of this.tunnels) if (!desktopId || t.desktopId === desktopId) n++;
    return n;
  }

  /** Login sessions that hold a tunnel or an unexpired credential. */
  sessions(): Set<string> {
    const out = new Set<string>();
    for (const t of this.tunnels) out.add(t.sessionId);
    for (const c of this.credentials.values()) out.add(c.sessionId);
    return out;
  }

  /** Closes the tunnels and forgets the credentials of a login session (it ended). */
  closeSession(sessionId: string): void {
    this.drop((g) => g.sessionId === sessionId);
  }

  /** Closes the tunnels and forgets the credentials of a desktop (it stopped or was deleted). */
  closeDesktop(desktopId: string): void {
    this.drop((g) => g.desktopId === desktopId);
  }

  /** Closes every tunnel and forgets every credential (server shutdown). */
  closeAll(): void {
    this.drop(() => true);
  }

  /** Looks again at the tunnels of a desktop (its record changed) and closes those no longer allowed. */
  recheck(desktopId: string): void {
    const open = [...this.tunnels].filter((t) => t.desktopId === desktopId);
    if (open.length === 0) return;
    void (async () => {
      for (const tunnel of open) {
        const target = await this.deps.target(desktopId, tunnel.userId, tunnel.sessionId);
        if (!target.allowed || target.port !== tunnel.port) this.closeTunnel(tunnel);
      }
    })().catch((err: unknown) => this.deps.log.warn({ err }, 'spice tunnel recheck failed'));
  }

  /** Looks again at the tunnels of a user (the account changed: role, group). */
  recheckUser(userId: string): void {
    const desktops = new Set(
      [...this.tunnels].filter((t) => t.userId === userId).map((t) => t.desktopId),
    );
    for (const desktopId of desktops) this.recheck(desktopId);
  }

  /** The server's `connect` event handler. */
  handleConnect = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const now = Date.now();
    const credential = this.authenticate(req.headers['proxy-authorization'], now);
    const remote = req.socket.remoteAddress ?? '';
    if (!credential) return answer(socket, 407);
    const { session } = credential;
    if (
      session &&
      (session.remote !== remote || now > session.until || session.channels >= MAX_CHANNELS)
    )
      return answer(socket, 407);
    const target = targetOf(req.url);
    if (!target || !LOOPBACK_HOSTS.includes(target.host) || target.port !== credential.port)
      return answer(socket, 403);
    // Consumed now, before anything is awaited: two racing first CONNECTs cannot both start a session.
    if (session) session.channels++;
    else credential.session = { remote, until: now + this.deps.channelWindowMs, channels: 1 };
    const tunnel: Tunnel = {
      userId: credential.userId,
      sessionId: credential.sessionId,
      desktopId: credential.desktopId,
      port: credential.port,
      client: socket,
      attached: false,
    };
    this.tunnels.add(tunnel);
    socket.once('close', () => this.closeTunnel(tunnel));
    void this.open(tunnel, head).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'spice tunnel failed');
      this.closeTunnel(tunnel);
    });
  };

  private async open(tunnel: Tunnel, head: Buffer): Promise<void> {
    const target = await this.deps.target(tunnel.desktopId, tunnel.userId, tunnel.sessionId);
    if (!this.tunnels.has(tunnel)) return;
    if (!target.allowed || target.port !== tunnel.port) {
      this.tunnels.delete(tunnel);
      return answer(tunnel.client, 403);
    }
    tunnel.attached = true;
    await this.deps.viewerAttached?.(tunnel.desktopId);
    if (!this.tunnels.has(tunnel)) return;
    const upstream = connect({ host: target.host ?? '127.0.0.1', port: tunnel.port });
    tunnel.upstream = upstream;
    upstream.setNoDelay(true);
    let established = false;
    upstream.once('connect', () => {
      if (!this.tunnels.has(tunnel)) return void upstream.destroy();
      established = true;
      tunnel.client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(tunnel.client);
      tunnel.client.pipe(upstream);
    });
    upstream.once('error', () => {
      if (established) return this.closeTunnel(tunnel);
      // The desktop's own port refused: the same answer as any other refusal.
      answer(tunnel.client, 403);
      this.closeTunnel(tunnel);
    });
    upstream.once('close', () => this.closeTunnel(tunnel));
  }

  private closeTunnel(tunnel: Tunnel): void {
    this.tunnels.delete(tunnel);
    tunnel.upstream?.destroy();
    tunnel.client.destroy();
    if (tunnel.attached) {
      tunnel.attached = false;
      this.deps.viewerDetached?.(tunnel.desktopId);
    }
  }

  private drop(match: (grant: SpiceGrant) => boolean): void {
    for (const [id, c] of this.credentials) if (match(c)) this.credentials.delete(id);
    for (const t of [...this.tunnels]) if (match(t)) this.closeTunnel(t);
  }

  /** The credential a `Proxy-Authorization` header names, while it may still be used. */
  private authenticate(header: string | undefined, now: number): Credential | undefined {
    const parts = basicCredentials(header);
    if (!parts) return undefined;
    const credential = this.credentials.get(parts[0]);
    if (!credential || !timingSafeEqual(credential.secretHash, sha256(parts[1]))) return undefined;
    const dead = credential.session ? now > credential.session.until : now > credential.expiresAt;
    if (dead) {
      this.credentials.delete(parts[0]);
      return undefined;
    }
    return credential;
  }

  private sweep(now: number): void {
    for (const [id, c] of this.credentials)
      if (c.session ? now > c.session.until : now > c.expiresAt) this.credentials.delete(id);
  }
}
