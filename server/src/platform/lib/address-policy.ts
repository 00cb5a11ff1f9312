/**
 * Which network addresses a media download may connect to: public unicast only. Refused are the
 * private ranges (10/8, 172.16/12, 192.168/16, fc00::/7), loopback (127/8, ::1), link-local
 * (169.254/16 with the cloud metadata address, fe80::/10), shared CGNAT space (100.64/10), the
 * unspecified addresses (0.0.0.0/8, ::), multicast, broadcast, documentation, benchmarking and
 * reserved blocks, and every IPv6 form that carries an IPv4 address (mapped, compatible, NAT64,
 * 6to4, Teredo), whatever IPv4 address it carries. Of IPv6 only global unicast (2000::/3) outside
 * its special blocks passes. Anything that does not parse as an address is refused.
 */
import net from 'node:net';

/** [network, prefix length] */
type Block = readonly [string, number];

const IPV4_REFUSED: readonly Block[] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast 255.255.255.255
];

/** Inside global unicast 2000::/3, the blocks that are not ordinary public hosts. */
const IPV6_REFUSED_IN_GLOBAL: readonly Block[] = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: carries an IPv4 address
  ['3fff::', 20], // documentation
];
const IPV6_GLOBAL: Block = ['2000::', 3];

/** The 32-bit value of a dotted IPv4 address, or null when it is not one. */
export function ipv4Value(address: string): number | null {
  if (!net.isIPv4(address)) return null;
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** The 128-bit value of an IPv6 address (zone id dropped), or null when it is not one. */
export function ipv6Value(address: string): bigint | null {
  const bare = address.replace(/%.*$/, '');
  if (!net.isIPv6(bare)) return null;
  let text = bare;
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = ipv4Value(dotted[1]);
    if (v4 === null) return null;
    text = `${text.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const inV4 = (value: number, [network, bits]: Block): boolean => {
  const base = ipv4Value(network) ?? 0;
  const size = 2 ** (32 - bits);
  return Math.floor(value / size) === Math.floor(base / size);
};

const inV6 = (value: bigint, [network, bits]: Block): boolean => {
  const shift = BigInt(128 - bits);
  return value >> shift === (ipv6Value(network) ?? 0n) >> shift;
};

function isPublicV4(value: number): boolean {
  return !IPV4_REFUSED.some((block) => inV4(value, block));
}

/** True when a download may connect to this literal address (IPv4 or IPv6). */
export function isPublicAddress(address: string): boolean {
  const v4 = ipv4Value(address);
  if (v4 !== null) return isPublicV4(v4);
  const v6 = ipv6Value(address);
  if (v6 === null) return false;
  // IPv4-mapped (::ffff:a.b.c.d), compatible (::a.b.c.d, ::, ::1) and NAT64 (64:ff9b::/96) lie
  // outside 2000::/3 and are refused with it, whatever IPv4 address they carry.
  if (!inV6(v6, IPV6_GLOBAL)) return false;
  return !IPV6_REFUSED_IN_GLOBAL.some((block) => inV6(v6, block));
}
