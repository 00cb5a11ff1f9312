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
  /** The desktops' networks on this machine (the local QEMU driver's). */
  network?: HostNetworks | undefined;
  /** The bridge of each network by its id (a libvirt host's cards go on it when it has it). */
  bridges?: (() => Promise<ReadonlyMap<string, string>>) | undefined;
  /** Where a libvirt host's one-off lines go. */
  log?: ((line: string) => void) | undefined;
}

export function createHypervisorDriver(settings: DriverSettings): Hypervisor {
  const { dataDir, accel, hypervisorUri, diskOwner, network, consoleAddress, volumeDir } = settings;
  const { bridges, log } = settings;
  if (hypervisorUri)
    return createLibvirtDriver({
      uri: hypervisorUri,
      dataDir,
      accel,
      diskOwner,
      ...(consoleAddress ? { consoleAddress } : {}),
      ...(volumeDir ? { volumeDir } : {}),
      ...(bridges ? { bridges } : {}),
      ...(log ? { log } : {}),
    });
  return createQemuDriver({ dataDir, accel, ...(network ? { network } : {}) });
}
