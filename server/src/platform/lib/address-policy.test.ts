import { describe, expect, it } from 'vitest';
import { ipv6Value, isPublicAddress } from './address-policy.ts';

describe('isPublicAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8, last'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12, last'],
    ['192.168.0.1', 'private 192.168/16'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback, last'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.254', 'CGNAT, last'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast SSDP'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:8.8.8.8', 'IPv4-mapped, even of a public address'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'cloud metadata (IPv6)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf::1', 'link-local, last block'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'site-local'],
    ['localhost', 'not an address'],
    ['', 'empty'],
    ['1.2.3', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    ['8.8.8.8'],
    ['93.184.216.34'],
    ['1.1.1.1'],
    ['100.63.255.255'],
    ['100.128.0.0'],
    ['172.15.255.255'],
    ['172.32.0.0'],
    ['169.253.255.255'],
    ['11.0.0.1'],
    ['223.255.255.254'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001:80b::200e'],
    ['2001:4860:4860::8888'],
  ])('admits the public address %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('reads every IPv6 spelling to the same value', () => {
    const v = ipv6Value('::ffff:127.0.0.1');
    expect(v).toBe(ipv6Value('::ffff:7f00:1'));
    expect(v).toBe(ipv6Value('0:0:0:0:0:ffff:7f00:0001'));
    expect(ipv6Value('::1')).toBe(1n);
    expect(ipv6Value('1::')).toBe(1n << 112n);
    expect(ipv6Value('not-v6')).toBeNull();
  });
});
