/** The hardware of new desktops: the documented defaults, merged with a template's and a body's. */
import { constants } from '../../../../src/generated/constants.ts';
import type { DesktopHardware } from '../../../../src/generated/types.ts';

const { boot_order, videos, graphics, interfaces, isos, floppies, ...scalars } =
  constants.desktops.newDesktopHardware.value;
/** The documented hardware of a new desktop (1 vcpu, 1 GB memory, 1 GB disk, boot from disk). */
export const NEW_DESKTOP_HARDWARE: DesktopHardware = {
  ...scalars,
  boot_order: [...boot_order],
  videos: [...videos],
  graphics: [...graphics],
  interfaces: [...interfaces],
  isos: [...isos],
  floppies: [...floppies],
};

/** A new desktop's hardware: the documented defaults, the template's, then what was sent. */
export function mergeHardware(
  base: DesktopHardware,
  sent: DesktopHardware | undefined,
): DesktopHardware {
  return withGpuVideo({ ...NEW_DESKTOP_HARDWARE, ...base, ...(sent ?? {}) });
}

/** A GPU-less desktop's video is reset to Default (GPU-only video needs a GPU profile). */
export function withGpuVideo(hardware: DesktopHardware): DesktopHardware {
  const vgpus = (hardware.reservables?.vgpus ?? []).filter((v) => v !== 'None');
  const videos = hardware.videos ?? [];
  return vgpus.length === 0 && videos.includes('none')
    ? { ...hardware, videos: ['default'] }
    : hardware;
}
