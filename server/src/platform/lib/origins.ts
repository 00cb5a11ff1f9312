/**
 * The portal's own origin and the Origin check of browser-facing websockets (socket.io, console
 * proxies). An Origin is accepted when its scheme, host and port equal one of:
 * - the portal's public origin: PUBLIC_URL, or when unset `http://<HOST>:<listening port>` (a
 *   wildcard or loopback HOST stands for the loopback names localhost, 127.0.0.1 and [::1]);
 * - an origin listed in ALLOWED_ORIGINS;
 * - with TRUST_PROXY only, the origin the reverse proxy says the request came to
 *   (X-Forwarded-Proto and X-Forwarded-Host, else the connection's scheme and the Host header).
 * A missing Origin, `null` or anything that is not a bare http(s) origin is refused.
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OriginSettings {
  publicUrl: string | undefined;
  host: string;
  allowedOrigins: readonly string[];
  trustProxy: boolean;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD = ['0.0.0.0', '::', '[::]', ''];

/** A bare http(s) origin in its serialised form (lower-case, default port dropped), else undefined. */
export function normalizeOrigin(value: string | undefined): string | undefined {
  if (!value || value === 'null') return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash)
      return undefined;
    // `new URL` accepts "http://host/"; an Origin header never carries the slash.
    if (value.endsWith('/')) return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The portal's own origins, the first being its public address. */
export function ownOrigins(settings: OriginSettings, listeningPort: number): string[] {
  if (settings.publicUrl) return [new URL(settings.publicUrl).origin];
  const host =
    settings.host.includes(':') && !settings.host.startsWith('[')
      ? `[${settings.host}]`
      : settings.host;
  const names = WILDCARD.includes(host)
    ? LOOPBACK
    : LOOPBACK.includes(host)
      ? [host, ...LOOPBACK.filter((n) => n !== host)]
      : [host];
  return names.map((name) => new URL(`http://${name}:${listeningPort}`).origin);
}

/** The public address of the portal (scheme, host name, port) as a URL. */
export function publicAddress(
  settings: OriginSettings,
  listeningPort: number,
): { protocol: 'http' | 'https'; hostname: string; port: number } {
  const url = new URL(
    ownOrigins(settings, listeningPort)[0] ?? `http://localhost:${listeningPort}`,
  );
  const protocol = url.protocol === 'https:' ? 'https' : 'http';
  return {
    protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80,
  };
}

const firstValue = (header: string | string[] | undefined): string | undefined => {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0]?.trim() || undefined;
};

/** The origin a reverse proxy says the request came to (only meaningful behind TRUST_PROXY). */
export function forwardedOrigin(req: IncomingMessage): string | undefined {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const proto = (
    firstValue(req.headers['x-forwarded-proto']) ?? (encrypted ? 'https' : 'http')
  ).toLowerCase();
  const host = firstValue(req.headers['x-forwarded-host']) ?? req.headers.host;
  if (!host || (proto !== 'http' && proto !== 'https')) return undefined;
  return normalizeOrigin(`${proto}://${host}`);
}

/** Whether the request's Origin header is one the portal accepts (rules above). */
export function originAllowed(
  req: IncomingMessage,
  settings: OriginSettings,
  listeningPort: number,
): boolean {
  const origin = normalizeOrigin(req.headers.origin);
  if (!origin) return false;
  if (ownOrigins(settings, listeningPort).includes(origin)) return true;
  if (settings.allowedOrigins.some((o) => normalizeOrigin(o) === origin)) return true;
  return settings.trustProxy && forwardedOrigin(req) === origin;
}

/** The port a server listens on (the configured one until it listens). */
export function listeningPort(
  server: { address(): AddressInfo | string | null },
  fallback: number,
): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : fallback;
}
