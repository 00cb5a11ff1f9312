/**
 * The driver's spec of a desktop: its hardware as the hypervisor takes it (media resolved to their
 * files), its disk, and the viewer passwords of this start (chosen when it was accepted).
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  type BootDevice,
  type DiskBus,
  type DomainNic,
  type DomainSpec,
  type VideoModel,
} from '../../platform/hypervisor/types.ts';
import { macFor } from '../../platform/hypervisor/qemu-network.ts';
import type { EngineDesktop, StartPasswords } from './types.ts';

/**
 * A desktop's network cards: one per network its hardware names, in that order, each with the
 * MAC of its place (stable across starts, so the guest keeps its DHCP leases).
 */
export function nicsOf(id: string, interfaces: readonly string[] | undefined): DomainNic[] {
  return (interfaces ?? []).map((network, i) => ({ network, mac: macFor(id, i) }));
}

/** What a spec needs to know besides the desktop. */
export interface SpecParts {
  /** The file of each medium that has one. */
  mediaPaths(ids: string[]): Promise<Map<string, string>>;
  /** Disk path of a desktop without its own. */
  diskPath(id: string): string;
}

const password = (bytes: number) => randomBytes(bytes).toString('base64url').slice(0, bytes);

/** Fresh viewer passwords for one start (VNC takes 8 characters). */
export const startPasswords = (): StartPasswords => ({ vnc: password(8), spice: password(16) });

/** The spec the driver starts; 428 when a medium in the hardware has no file. */
export async function domainSpecOf(desktop: EngineDesktop, parts: SpecParts): Promise<DomainSpec> {
  const hw = desktop.hardware;
  const mediaIds = [...(hw.isos ?? []), ...(hw.floppies ?? [])].map((m) => m.id);
  const paths = mediaIds.length ? await parts.mediaPaths(mediaIds) : new Map<string, string>();
  const pathOf = (m: { id: string }) => {
    const p = paths.get(m.id);
    if (!p)
      throw new ApiError(
        'precondition_required',
        `Media ${m.id} is not available`,
        'media_invalid',
        { id: m.id },
      );
    return p;
  };
  const bus = hw.disk_bus && hw.disk_bus !== 'default' ? hw.disk_bus : 'virtio';
  const video = hw.videos?.[0];
  return {
    id: desktop.id,
    name: desktop.name,
    diskPath: desktop.disk_path ?? parts.diskPath(desktop.id),
    hardware: {
      vcpus: hw.vcpus ?? 1,
      memoryMiB: Math.round((hw.memory ?? 1) * 1024),
      bootOrder: (hw.boot_order ?? ['disk']).filter((b): b is BootDevice =>
        ['disk', 'iso', 'floppy', 'pxe'].includes(b),
      ),
      diskBus: (['virtio', 'ide', 'sata'].includes(bus) ? bus : 'virtio') as DiskBus,
      video: (video && ['default', 'vga', 'virtio', 'none'].includes(video)
        ? video
        : 'default') as VideoModel,
      isos: (hw.isos ?? []).map(pathOf),
      floppies: (hw.floppies ?? []).map(pathOf),
    },
    vncPassword: desktop.passwords?.vnc ?? password(8),
    spicePassword: desktop.passwords?.spice ?? password(16),
    network: nicsOf(desktop.id, hw.interfaces),
  };
}
