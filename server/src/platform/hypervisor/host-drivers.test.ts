import { describe, expect, it } from 'vitest';
import { createFakeDriver, type FakeHypervisor } from './fake-driver.ts';
import { HostDrivers, type HostConfig } from './host-drivers.ts';
import type { DomainSpec, ExitInfo } from './types.ts';

const spec = (id: string): DomainSpec => ({
  id,
  name: id,
  diskPath: `/disks/${id}.qcow2`,
  hardware: {
    vcpus: 1,
    memoryMiB: 256,
    bootOrder: [],
    diskBus: 'virtio',
    video: 'vga',
    isos: [],
    floppies: [],
  },
  vncPassword: 'vncpass1',
  spicePassword: 'spice',
});
const host = (id: string, over: Partial<HostConfig> = {}): HostConfig => ({
  id,
  uri: `qemu+ssh://vdi@${id}/system`,
  sshKey: null,
  consoleAddress: '127.0.0.1',
  enabled: true,
  running: 0,
  ...over,
});

describe('the hosts’ drivers', () => {
  it('makes a host’s driver when first needed, routes by the recorded host, drops it once disabled and idle', async () => {
    const local = createFakeDriver();
    const made = new Map<string, FakeHypervisor>();
    const recorded = new Map<string, string>([['d1', 'a']]);
    const drivers = new HostDrivers({
      local,
      make: (h) => {
        const driver = createFakeDriver();
        made.set(h.id, driver);
        return driver;
      },
      hostOf: async (id) => recorded.get(id) ?? null,
    });
    const exits: [string, ExitInfo][] = [];
    drivers.on('exit', (id, info) => exits.push([id, info]));
    await drivers.sync([host('a'), host('b')]);
    expect(drivers.activeHosts()).toEqual(['local']);

    await drivers.start(spec('d1'));
    await drivers.start(spec('d2'));
    expect(drivers.activeHosts()).toEqual(['local', 'a']);
    expect(made.get('a')?.domains.has('d1')).toBe(true);
    expect(local.domains.has('d2')).toBe(true);
    expect(await drivers.status('d1')).toBe('running');
    expect((await drivers.list()).map((r) => r.id).sort()).toEqual(['d1', 'd2']);
    await drivers.prepareDisk({ path: '/disks/new.qcow2', sizeGiB: 1 });
    expect(local.disks()).toContain('/disks/new.qcow2');

    // Disabled while it runs a domain: kept; once idle: dropped, its domain's exit still heard.
    await drivers.sync([host('a', { enabled: false, running: 1 }), host('b')]);
    expect(drivers.activeHosts()).toEqual(['local', 'a']);
    await drivers.stop('d1');
    expect(exits.map(([id]) => id)).toEqual(['d1']);
    expect(await drivers.lastExit('d1')).toMatchObject({ expected: true });
    await drivers.sync([host('a', { enabled: false }), host('b')]);
    expect(drivers.activeHosts()).toEqual(['local']);

    // A deleted host has no driver: its domains are absent, stopping them is a no-op.
    recorded.set('d3', 'b');
    await drivers.start(spec('d3'));
    await drivers.stop('d3');
    await drivers.sync([host('a', { enabled: false })]);
    expect(drivers.activeHosts()).toEqual(['local']);
    recorded.set('d4', 'b');
    expect(await drivers.status('d4')).toBe('absent');
    await expect(drivers.stop('d4')).resolves.toBeUndefined();
    await expect(drivers.start(spec('d4'))).rejects.toMatchObject({ code: 'start_failed' });
    await drivers.close();
  });
});
