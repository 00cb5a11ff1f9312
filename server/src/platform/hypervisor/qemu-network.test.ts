import { describe, expect, it } from 'vitest';
import { buildQemuArgs } from './qemu-command.ts';
import { macFor, nicArgs } from './qemu-network.ts';
import { parseLeases } from './host-bridges.ts';
import { HostNetworks } from './host-networks.ts';
import { ipBatch, nftRules } from './host-bridges.ts';
import { seededNetwork, seededNetworks } from './network-defs.ts';
import { demoSpec } from './test-support.ts';
import { HypervisorError, type DomainSpec } from './types.ts';

const ctx = {
  accel: 'tcg' as const,
  vncPort: 5903,
  spicePort: 15904,
  qmpPath: '/data/run/d1/qmp.sock',
  pidPath: '/data/run/d1/qemu.pid',
};

describe('network cards in the QEMU command', () => {
  it('gives each desktop card a stable MAC of its own under QEMU’s prefix', () => {
    expect(macFor('desktop-1')).toBe(macFor('desktop-1', 0));
    expect(macFor('desktop-1')).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
    expect(macFor('desktop-1', 1)).not.toBe(macFor('desktop-1', 0));
    expect(macFor('desktop-2')).not.toBe(macFor('desktop-1'));
  });

  it('plugs a TAP card or a user-mode card, and none without a host side', () => {
    const mac = macFor('d1');
    expect(nicArgs([])).toEqual(['-nic', 'none']);
    expect(nicArgs([{ network: 'default', mac }])).toEqual(['-nic', 'none']);
    expect(
      nicArgs([{ network: 'default', mac, backend: { kind: 'tap', ifname: 'vditabc12340' } }]),
    ).toEqual([
      '-netdev',
      'tap,id=net0,ifname=vditabc12340,script=no,downscript=no',
      '-device',
      `virtio-net-pci,netdev=net0,mac=${mac}`,
    ]);
    expect(nicArgs([{ network: 'default', mac, backend: { kind: 'user' } }])).toEqual([
      '-netdev',
      'user,id=net0',
      '-device',
      `virtio-net-pci,netdev=net0,mac=${mac}`,
    ]);
  });

  it('refuses a bad MAC or TAP name (they reach the command line)', () => {
    const card = (mac: string, ifname: string): DomainSpec => ({
      ...demoSpec('d1', '/data/disks/d1.qcow2'),
      network: [{ network: 'default', mac, backend: { kind: 'tap', ifname } }],
    });
    expect(() => buildQemuArgs(card('52:54:00:aa:bb:cc,x=1', 'vdit1'), ctx)).toThrow(
      HypervisorError,
    );
    expect(() => buildQemuArgs(card(macFor('d1'), 'tap0,script=/bin/sh'), ctx)).toThrow(
      HypervisorError,
    );
    const ok = buildQemuArgs(card(macFor('d1'), 'vdit1'), ctx);
    expect(ok).not.toContain('-nic');
    expect(ok.filter((a) => a === '-netdev')).toHaveLength(1);
  });
});

describe('host networks', () => {
  it('runs ip commands in one process and rejects with the failing line’s error', async () => {
    await expect(ipBatch(['link show dev lo', 'address show dev lo'])).resolves.toBeUndefined();
    await expect(ipBatch(['link show dev lo', 'link show dev vdinosuch0'])).rejects.toThrow(
      /ip -batch: .*vdinosuch0/s,
    );
  });

  it('reads dnsmasq leases by MAC', () => {
    const leases = parseLeases(
      '1795920923 52:54:00:AA:bb:cc 10.87.0.17 tiny-aabbcc 01:52:54:00:aa:bb:cc\n\n' +
        '1795920999 52:54:00:11:22:33 10.87.0.18 * *\n',
    );
    expect(leases.get('52:54:00:aa:bb:cc')?.ip).toBe('10.87.0.17');
    expect(leases.get('52:54:00:11:22:33')?.ip).toBe('10.87.0.18');
    expect(leases.size).toBe(2);
  });

  it('names TAP devices within the 15 characters Linux allows, from the prefix and the domain', () => {
    const networks = new HostNetworks({ mode: 'none', prefix: 'abcdef' });
    const name = networks.tapName('0f9d6a2e-7c1b-4d7e-9a55-3f1c2b7e8d90', 3);
    expect(name).toMatch(/^abcdeft[0-9a-f]{7}3$/);
    expect(name.length).toBeLessThanOrEqual(15);
    expect(networks.bridge).toBe('abcdefnat0');
    expect(() => new HostNetworks({ mode: 'none', prefix: 'Bad-1' })).toThrow();
  });

  it('gives user-mode cards without root tools, and no card in mode none', async () => {
    const spec: DomainSpec = {
      ...demoSpec('d1', '/data/disks/d1.qcow2'),
      network: [{ network: 'default', mac: macFor('d1') }],
    };
    const user = new HostNetworks({ mode: 'user' });
    expect((await user.attach(spec)).network).toEqual([
      { network: 'default', mac: macFor('d1'), backend: { kind: 'user' } },
    ]);
    expect(user.serves('d1')).toBe(false);
    const none = new HostNetworks({ mode: 'none' });
    expect((await none.attach(spec)).network).toEqual([]);
    await expect(
      user.attach({ ...spec, network: [{ network: 'elsewhere', mac: macFor('d1') }] }),
    ).rejects.toThrow(HypervisorError);
  });

  it('says once, without root, that desktops get user-mode networking', () => {
    const lines: string[] = [];
    const networks = new HostNetworks({
      log: (line) => lines.push(line),
      mode: 'auto',
    });
    if (process.getuid?.() === 0) expect(['bridge', 'user']).toContain(networks.mode);
    else {
      expect(networks.mode).toBe('user');
      expect(lines).toHaveLength(1);
    }
  });

  it('seeds three networks, one per kind, on the NAT subnet and the two /24s after it', () => {
    expect(seededNetworks('vdi', '10.87.0')).toEqual([
      { id: 'default', kind: 'nat', bridge: 'vdinat0', subnet: '10.87.0' },
      { id: 'private', kind: 'isolated', bridge: 'vdiprv0', subnet: '10.87.1' },
      { id: 'wireguard', kind: 'vpn', bridge: 'vdivpn0', subnet: '10.87.2' },
    ]);
  });

  it('masquerades a nat network, forwards nothing of an isolated one, and only the tunnel of the vpn one', () => {
    const rules = (kind: 'nat' | 'isolated' | 'vpn') =>
      nftRules(seededNetwork('vdi', '10.87.0', kind), 'vdiwg0').slice(2);
    expect(rules('nat')).toEqual([
      'add chain ip vdinat0_net postrouting { type nat hook postrouting priority 100 ; }',
      'add rule ip vdinat0_net postrouting ip saddr 10.87.0.0/24 ip daddr != 10.87.0.0/24 masquerade',
      'add rule ip vdinat0_net forward iifname vdinat0 accept',
      'add rule ip vdinat0_net forward oifname vdinat0 ct state established,related accept',
    ]);
    expect(rules('isolated')).toEqual([
      'add rule ip vdiprv0_net forward iifname vdiprv0 drop',
      'add rule ip vdiprv0_net forward oifname vdiprv0 drop',
    ]);
    expect(rules('vpn')).toEqual([
      'add rule ip vdivpn0_net forward iifname vdivpn0 oifname != vdiwg0 drop',
      'add rule ip vdivpn0_net forward oifname vdivpn0 iifname != vdiwg0 drop',
    ]);
  });

  it('gives each card a user-mode card of the network it names, in order, without root', async () => {
    const spec: DomainSpec = {
      ...demoSpec('d2', '/data/disks/d2.qcow2'),
      network: ['private', 'default'].map((network, i) => ({ network, mac: macFor('d2', i) })),
    };
    const user = new HostNetworks({ mode: 'user' });
    expect((await user.attach(spec)).network?.map((nic) => [nic.network, nic.mac])).toEqual([
      ['private', macFor('d2', 0)],
      ['default', macFor('d2', 1)],
    ]);
    expect(nicArgs((await user.attach(spec)).network ?? [])).toEqual([
      '-netdev',
      'user,id=net0',
      '-device',
      `virtio-net-pci,netdev=net0,mac=${macFor('d2', 0)}`,
      '-netdev',
      'user,id=net1',
      '-device',
      `virtio-net-pci,netdev=net1,mac=${macFor('d2', 1)}`,
    ]);
  });
});
