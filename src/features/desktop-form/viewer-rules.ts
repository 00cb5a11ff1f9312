/**
 * Viewer rules of the desktop form (spec sections 3, 4 and 9): viewers in the generated default
 * order; RDP-family viewers need the wireguard network, choosing one adds wireguard when the user
 * may use it, and removing wireguard removes them.
 */
import { constants } from '@/generated/constants';
import type {
  DesktopGuestProperties,
  ViewerDefaultsNeedsWireguard,
  ViewerDefaultsNewDesktopDefault,
  ViewerKey,
} from '@/generated/types';

export type ViewersMap = NonNullable<DesktopGuestProperties['viewers']>;
export type GuestViewerKey = keyof ViewersMap;

/**
 * Schema defaults of `viewer-defaults#/$defs/needsWireguard` and `newDesktopDefault`, typed by the
 * generated types; viewer-rules.test.ts checks them against the schema.
 */
export const NEEDS_WIREGUARD: ViewerDefaultsNeedsWireguard = [
  'browser-rdp',
  'file-rdpgw',
  'file-rdpvpn',
];
export const NEW_DESKTOP_VIEWERS: ViewerDefaultsNewDesktopDefault = ['browser-vnc', 'file-spice'];
const VIEWER_KEYS: readonly ViewerKey[] = [
  'browser-vnc',
  'file-spice',
  'browser-rdp',
  'file-rdpgw',
  'file-rdpvpn',
];

/** Interface id of the wireguard network (reference 4.1; not in the schema). */
export const WIREGUARD = 'wireguard';

/** Every viewer in the generated default order (vnc 1, spice 2, rdp 3, rdpgw 4, rdpvpn 5). */
export const ORDERED_VIEWERS: readonly ViewerKey[] = constants['viewer-defaults'].order.value
  .map((short) => VIEWER_KEYS.find((key) => key.slice(key.indexOf('-') + 1) === short))
  .filter((key): key is ViewerKey => !!key);

/** `browser-vnc` -> `browser_vnc` (the guest_properties.viewers key). */
export function guestKey(viewer: ViewerKey): GuestViewerKey {
  return viewer.replace('-', '_') as GuestViewerKey;
}

export function needsWireguard(viewer: ViewerKey): boolean {
  return NEEDS_WIREGUARD.includes(viewer);
}

/** The viewers map of a list of viewers (options null, as the portal sends them). */
export function viewersMap(viewers: readonly ViewerKey[]): ViewersMap {
  return Object.fromEntries(
    viewers.map((viewer) => [guestKey(viewer), { options: null }]),
  ) as ViewersMap;
}

/** Adds or removes one viewer, keeping the options of the others. */
export function toggleViewer(
  current: ViewersMap | undefined,
  viewer: ViewerKey,
  checked: boolean,
): ViewersMap {
  const key = guestKey(viewer);
  const rest = Object.entries(current ?? {}).filter(([name]) => name !== key);
  const kept = (current ?? {})[key] ?? { options: null };
  return Object.fromEntries(checked ? [...rest, [key, kept]] : rest) as ViewersMap;
}

/** The chosen viewers that need wireguard. */
export function wireguardViewers(current: ViewersMap | undefined): ViewerKey[] {
  return ORDERED_VIEWERS.filter(
    (viewer) => needsWireguard(viewer) && current?.[guestKey(viewer)] !== undefined,
  );
}

/** Interfaces after choosing an RDP viewer: wireguard added when allowed (else unchanged). */
export function interfacesForViewer(
  interfaces: readonly string[] | undefined,
  viewer: ViewerKey,
  allowed: readonly string[],
): string[] {
  const list = [...(interfaces ?? [])];
  if (needsWireguard(viewer) && !list.includes(WIREGUARD) && allowed.includes(WIREGUARD))
    list.push(WIREGUARD);
  return list;
}

/** Viewers after the interfaces changed: without wireguard the RDP-family viewers go. */
export function viewersForInterfaces(
  current: ViewersMap | undefined,
  interfaces: readonly string[] | undefined,
): ViewersMap | undefined {
  if (!current || (interfaces ?? []).includes(WIREGUARD)) return current;
  const rdp = wireguardViewers(current);
  if (!rdp.length) return current;
  return rdp.reduce<ViewersMap>((map, viewer) => toggleViewer(map, viewer, false), current);
}
