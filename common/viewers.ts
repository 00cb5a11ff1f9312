/**
 * Viewer facts both sides use, read from the viewer-defaults schema: the wire keys in their default
 * order, which ones need the wireguard network, the viewers of a new desktop, and the mapping
 * between wire keys (`browser-vnc`) and the keys of `guest_properties.viewers` (`browser_vnc`).
 */
import { constants, defaults } from '../src/generated/constants.ts';
import type { DesktopGuestProperties, ViewerKey } from '../src/generated/types.ts';

export type GuestViewers = NonNullable<DesktopGuestProperties['viewers']>;
export type GuestViewerKey = keyof GuestViewers;

/** Every viewer in the default order (vnc, spice, rdp, rdpgw, rdpvpn). */
export const VIEWER_ORDER: readonly ViewerKey[] = constants['viewer-defaults'].order.value.map(
  (short) => defaults.ViewerDefaultsKeys[short],
);

/** Viewers that need an IP, that is the wireguard network. */
export const NEEDS_WIREGUARD: readonly ViewerKey[] = defaults.ViewerDefaultsNeedsWireguard;

/** Viewers a new desktop gets. */
export const NEW_DESKTOP_VIEWERS: readonly ViewerKey[] = defaults.ViewerDefaultsNewDesktopDefault;

/** Interface id of the wireguard network. */
export const WIREGUARD_INTERFACE: string = constants['viewer-defaults'].wireguardInterface.value;

/** `browser-vnc` -> `browser_vnc` (the guest_properties.viewers key). */
export function guestKey(viewer: ViewerKey): GuestViewerKey {
  return viewer.replace('-', '_') as GuestViewerKey;
}

/** The wire viewer keys a desktop's guest properties configure, in the default order. */
export function configuredViewers(
  viewers: Readonly<Record<string, unknown>> | undefined,
): ViewerKey[] {
  const set = viewers ?? {};
  return VIEWER_ORDER.filter((viewer) => guestKey(viewer) in set);
}

export function needsWireguard(viewer: ViewerKey): boolean {
  return NEEDS_WIREGUARD.includes(viewer);
}
