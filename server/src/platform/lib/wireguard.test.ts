import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  endpointOf,
  isUserAddressIn,
  isWireguardKey,
  newWireguardKeyPair,
  numberToIpv4,
  parseIpv4Network,
  userAddressRange,
} from './wireguard.ts';

describe('wireguard helpers', () => {
  it('makes X25519 pairs in the WireGuard encoding whose public key matches the private one', () => {
    const pair = newWireguardKeyPair();
    expect(isWireguardKey(pair.privateKey)).toBe(true);
    expect(isWireguardKey(pair.publicKey)).toBe(true);
    expect(pair.privateKey).not.toBe(pair.publicKey);
    const d = Buffer.from(pair.privateKey, 'base64').toString('base64url');
    const x = Buffer.from(pair.publicKey, 'base64').toString('base64url');
    const key = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d, x }, format: 'jwk' });
    expect(createPublicKey(key).export({ format: 'jwk' }).x).toBe(x);
    expect(newWireguardKeyPair().privateKey).not.toBe(pair.privateKey);
  });

  it('tells WireGuard keys from other text', () => {
    expect(isWireguardKey('QmCH1oVnxQf9FsM4gj4llDWjHfT9ZS0zlIZWp5KcxQE=')).toBe(true);
    expect(isWireguardKey('QmCH1oVnxQf9FsM4gj4llDWjHfT9ZS0zlIZWp5KcxQF=')).toBe(false);
    expect(isWireguardKey('short=')).toBe(false);
  });

  it('reads IPv4 networks and leaves the network, gateway and broadcast addresses out', () => {
    const net = parseIpv4Network('10.0.3.7/16');
    expect(net && numberToIpv4(net.network)).toBe('10.0.0.0');
    expect(net && numberToIpv4(net.broadcast)).toBe('10.0.255.255');
    const range = net && userAddressRange(net);
    expect(range && numberToIpv4(range.first)).toBe('10.0.0.2');
    expect(range && numberToIpv4(range.last)).toBe('10.0.255.254');
    if (!net) throw new Error('no network');
    expect(isUserAddressIn('10.0.0.1', net)).toBe(false);
    expect(isUserAddressIn('10.0.0.2', net)).toBe(true);
    expect(isUserAddressIn('10.1.0.2', net)).toBe(false);
    const tiny = parseIpv4Network('192.168.1.0/31');
    expect(tiny && userAddressRange(tiny)).toBeNull();
    for (const bad of ['10.0.0.0', '10.0.0.0/33', '10.0.0.256/8', 'x/8', '10.0.0.0/8/1', ''])
      expect(parseIpv4Network(bad), bad).toBeNull();
  });

  it('brackets IPv6 endpoints', () => {
    expect(endpointOf('vpn.example.org', 443)).toBe('vpn.example.org:443');
    expect(endpointOf('2001:db8::1', 51820)).toBe('[2001:db8::1]:51820');
  });
});
