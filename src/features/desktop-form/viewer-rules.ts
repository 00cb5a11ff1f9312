/**
 * Viewer rules of the desktop form: viewers in the generated default
 * order; RDP-family viewers need the wireguard network, choosing one adds wireguard when the user
 * may use it, and removing wireguard removes them.
 */
import type { ViewerKey } from '@/generated/types';
import {
  guestKey,
  NEEDS_WIREGUARD,
  needsWireguard,
  NEW_DESKTOP_VIEWERS,
  VIEWER_ORDER,
  WIREGUARD_INTERFACE,
  type GuestViewers,
} from '@common/viewers';

export { guestKey, NEEDS_WIREGUARD, needsWireguard, NEW_DESKTOP_VIEWERS };
export type ViewersMap = GuestViewers;
/** Interface id of the wireguard network. */
export const WIREGUARD = WIREGUARD_INTERFACE;
/** Every viewer in the generated default order (vnc 1, spice 2, rdp 3, rdpgw 4, rdpvpn 5). */
export const ORDERED_VIEWERS: readonly ViewerKey[] = VIEWER_ORDER;

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
