import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('gives a desktop 20 s to power off unless DESKTOP_STOP_TIMEOUT says otherwise', () => {
    expect(loadConfig({}).shutdownGraceMs).toBe(20_000);
    expect(loadConfig({ DESKTOP_STOP_TIMEOUT: '5s' }).shutdownGraceMs).toBe(5_000);
    expect(loadConfig({ DESKTOP_STOP_TIMEOUT: '2m' }).shutdownGraceMs).toBe(120_000);
  });

  it('refuses a DESKTOP_STOP_TIMEOUT that is not a duration', () => {
    expect(() => loadConfig({ DESKTOP_STOP_TIMEOUT: 'soon' })).toThrow(/DESKTOP_STOP_TIMEOUT/);
  });

  it('leases background work for 15 s unless WORK_LEASE says otherwise, never under 3 s', () => {
    expect(loadConfig({}).workLeaseMs).toBe(15_000);
    expect(loadConfig({ WORK_LEASE: '4s' }).workLeaseMs).toBe(4_000);
    expect(() => loadConfig({ WORK_LEASE: '2s' })).toThrow(/WORK_LEASE/);
    expect(() => loadConfig({ WORK_LEASE: 'short' })).toThrow(/WORK_LEASE/);
  });

  it('names the node NODE_NAME, else its host name and port', () => {
    expect(loadConfig({ PORT: '8081' }).nodeName).toBe(`${hostname()}:8081`);
    expect(loadConfig({ NODE_NAME: 'portal-2' }).nodeName).toBe('portal-2');
    expect(() => loadConfig({ NODE_NAME: 'two words' })).toThrow(/NODE_NAME/);
  });

  it('runs desktops on the local QEMU driver unless HYPERVISOR_URI names a libvirt host', () => {
    expect(loadConfig({}).hypervisorUri).toBeUndefined();
    expect(loadConfig({ HYPERVISOR_URI: '' }).hypervisorUri).toBeUndefined();
    for (const uri of [
      'qemu:///session',
      'qemu:///system',
      'qemu+ssh://vdi@host1/system',
      'qemu+ssh://vdi-hv-a@127.0.0.1:2222/session?keyfile=/k/id&no_verify=1',
    ])
      expect(loadConfig({ HYPERVISOR_URI: uri }).hypervisorUri).toBe(uri);
    for (const uri of ['xen:///system', 'qemu+ssh://host', 'qemu:///session; rm -rf /', 'host1'])
      expect(() => loadConfig({ HYPERVISOR_URI: uri })).toThrow(/HYPERVISOR_URI/);
    expect(loadConfig({}).hypervisorDiskOwner).toBeUndefined();
    expect(loadConfig({ HYPERVISOR_DISK_OWNER: '1001:1002' }).hypervisorDiskOwner).toEqual({
      uid: 1001,
      gid: 1002,
    });
    expect(() => loadConfig({ HYPERVISOR_DISK_OWNER: 'vdi' })).toThrow(/HYPERVISOR_DISK_OWNER/);
  });
});
