/**
 * WireGuard pieces that need no database: X25519 key pairs in WireGuard's encoding (the raw
 * 32-byte keys in standard base64), IPv4 network arithmetic for the users' addresses, and the
 * client configuration file (`Key = value` lines, an [Interface] and a [Peer] section).
 */
import { generateKeyPairSync } from 'node:crypto';
import { isIPv6 } from 'node:net';

export interface WireguardKeyPair {
  privateKey: string;
  publicKey: string;
}

/** A new X25519 key pair, each key the base64 of its 32 raw bytes (what `wg genkey` writes). */
export function newWireguardKeyPair(): WireguardKeyPair {
  const { privateKey } = generateKeyPairSync('x25519');
  const jwk = privateKey.export({ format: 'jwk' });
  if (typeof jwk.d !== 'string' || typeof jwk.x !== 'string')
    throw new Error('X25519 key export without d or x');
  return {
    privateKey: Buffer.from(jwk.d, 'base64url').toString('base64'),
    publicKey: Buffer.from(jwk.x, 'base64url').toString('base64'),
  };
}

/** True for a WireGuard key: 32 bytes in standard base64. */
export function isWireguardKey(value: string): boolean {
  return /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(value);
}

export interface Ipv4Network {
  /** the network address as an unsigned 32-bit number */
  network: number;
  prefix: number;
  broadcast: number;
}

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `a.b.c.d` -> its unsigned 32-bit number, or null when it is not a dotted IPv4 address. */
export function ipv4ToNumber(address: string): number | null {
  const m = IPV4_RE.exec(address);
  if (!m) return null;
  let n = 0;
  for (const part of m.slice(1)) {
    const octet = Number(part);
    if (octet > 255) return null;
    n = n * 256 + octet;
  }
  return n;
}

export function numberToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** `a.b.c.d/p` -> the network it names (host bits cleared), or null when malformed. */
export function parseIpv4Network(cidr: string): Ipv4Network | null {
  const [address, prefixText, extra] = cidr.trim().split('/');
  if (address === undefined || prefixText === undefined || extra !== undefined) return null;
  if (!/^\d{1,2}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  const n = ipv4ToNumber(address);
  if (n === null || prefix > 32) return null;
  const size = 2 ** (32 - prefix);
  const network = n - (n % size);
  return { network, prefix, broadcast: network + size - 1 };
}

/**
 * The addresses a user may get in a network: every host address except the network address, the
 * gateway (the first host) and the broadcast address. Empty for networks too small to have any.
 */
export function userAddressRange(net: Ipv4Network): { first: number; last: number } | null {
  const first = net.network + 2;
  const last = net.broadcast - 1;
  return first <= last ? { first, last } : null;
}

/** The server's own address in a users' network: its first host. */
export function gatewayOf(net: Ipv4Network): string {
  return numberToIpv4(net.network + 1);
}

/** True when `address` is one a user may hold in `net`. */
export function isUserAddressIn(address: string, net: Ipv4Network): boolean {
  const n = ipv4ToNumber(address);
  const range = userAddressRange(net);
  return n !== null && range !== null && n >= range.first && n <= range.last;
}

/** `host:port`, with an IPv6 literal in brackets. */
export function endpointOf(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

export interface WireguardClientConfig {
  address: string;
  privateKey: string;
  mtu: number;
  serverPublicKey: string;
  endpoint: string;
  allowedIps: string;
}

/** The client's .conf file. */
export function wireguardClientConfig(c: WireguardClientConfig): string {
  return [
    '[Interface]',
    `Address = ${c.address}`,
    `PrivateKey = ${c.privateKey}`,
    `MTU = ${c.mtu}`,
    '',
    '[Peer]',
    `PublicKey = ${c.serverPublicKey}`,
    `Endpoint = ${c.endpoint}`,
    `AllowedIPs = ${c.allowedIps}`,
    'PersistentKeepalive = 25',
    '',
  ].join('\n');
}
