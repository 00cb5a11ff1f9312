/**
 * The hypervisor driver of a portal: the local QEMU driver (one `qemu-system-x86_64` per desktop on
 * this machine, the zero-set-up default), or the libvirt driver when a libvirt URI is configured
 * (`HYPERVISOR_URI`: `qemu+ssh://user@host/system` in production, `qemu:///session` for a local
 * user's session daemon).
 */
import { createLibvirtDriver } from './libvirt-driver.ts';
import type { HostNetworks } from './host-networks.ts';
import { createQemuDriver } from './qemu-driver.ts';
import type { Accel, Hypervisor } from './types.ts';

export interface DriverSettings {
  dataDir: string;
  accel: Accel;
  /** A libvirt connection URI; unset = the local QEMU driver. */
  hypervisorUri?: string | undefined;
  /** Owner of the disk files made for the libvirt host (a session daemon's account). */
  diskOwner?: { uid: number; gid: number } | undefined;
  /** The libvirt host's console address (default 127.0.0.1). */
  consoleAddress?: string | undefined;
  /** The libvirt host's volumes' names on the portal (see `LibvirtDriverOptions.volumeDir`). */
  volumeDir?: string | undefined;
  /** The desktops' networks on this machine (the local QEMU driver's; libvirt hosts: not yet). */
  network?: HostNetworks | undefined;
}

export function createHypervisorDriver(settings: DriverSettings): Hypervisor {
  const { dataDir, accel, hypervisorUri, diskOwner, network, consoleAddress, volumeDir } = settings;
  if (hypervisorUri)
    return createLibvirtDriver({
      uri: hypervisorUri,
      dataDir,
      accel,
      diskOwner,
      ...(consoleAddress ? { consoleAddress } : {}),
      ...(volumeDir ? { volumeDir } : {}),
    });
  return createQemuDriver({ dataDir, accel, ...(network ? { network } : {}) });
}
