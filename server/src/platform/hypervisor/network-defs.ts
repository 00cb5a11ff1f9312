/**
 * The desktops' networks as the host side needs them (pure, no I/O): an id (what a desktop's cards
 * name), a kind, the host's bridge and the /24 it serves, and the three networks seeded at boot,
 * named from the network prefix and the NAT subnet: `default` (nat, `<prefix>nat0`, the NAT
 * subnet), `private` (isolated, `<prefix>prv0`, the next /24) and `wireguard` (vpn, `<prefix>vpn0`,
 * the /24 after it).
 */

/** nat: outbound access through the host; isolated: no forwarding; vpn: the users' tunnels only. */
export type NetworkKind = 'nat' | 'isolated' | 'vpn';

export interface NetworkDef {
  id: string;
  kind: NetworkKind;
  /** The host's Linux bridge (at most 15 characters). */
  bridge: string;
  /** The network's /24 as its first three octets; the host is `.1`. */
  subnet: string;
}

/** The network of a desktop whose hardware names none: the NAT network. */
export const DEFAULT_NETWORK = 'default';
/** The isolated network seeded at boot. */
export const PRIVATE_NETWORK = 'private';
/** The network the users' VPN tunnels reach, seeded at boot. */
export const VPN_NETWORK = 'wireguard';

const OCTETS = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `10.87.0.0/24` -> `10.87.0`; undefined for anything else than such a /24. */
export function octetsOf(cidr: string): string | undefined {
  const m = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.0\/24$/.exec(cidr);
  return m?.[1];
}

/** `10.87.0` -> `10.87.0.0/24`. */
export const cidrOf = (octets: string): string => `${octets}.0/24`;

/** The /24 `step` networks after `octets` (the third octet wraps within its second). */
function nextSubnet(octets: string, step: number): string {
  const m = OCTETS.exec(octets);
  if (!m) throw new Error(`not a /24 as three octets: ${octets}`);
  return `${m[1]}.${m[2]}.${(Number(m[3]) + step) % 256}`;
}

/** The seeded network of each kind, from the network prefix and the NAT subnet. */
export function seededNetwork(prefix: string, natSubnet: string, kind: NetworkKind): NetworkDef {
  const seeds: Record<NetworkKind, NetworkDef> = {
    nat: { id: DEFAULT_NETWORK, kind: 'nat', bridge: `${prefix}nat0`, subnet: natSubnet },
    isolated: {
      id: PRIVATE_NETWORK,
      kind: 'isolated',
      bridge: `${prefix}prv0`,
      subnet: nextSubnet(natSubnet, 1),
    },
    vpn: {
      id: VPN_NETWORK,
      kind: 'vpn',
      bridge: `${prefix}vpn0`,
      subnet: nextSubnet(natSubnet, 2),
    },
  };
  return seeds[kind];
}

/** The three networks seeded at boot, from the network prefix and the NAT subnet. */
export function seededNetworks(prefix: string, natSubnet: string): NetworkDef[] {
  return (['nat', 'isolated', 'vpn'] as const).map((kind) =>
    seededNetwork(prefix, natSubnet, kind),
  );
}
