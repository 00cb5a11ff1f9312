/**
 * Viewer order and the remembered choice: viewers are listed in the
 * generated default order (vnc 1, spice 2, rdp 3, rdpgw 4, rdpvpn 5); the last viewer a user
 * opened is kept in local storage per user and offered first next time.
 */
import type { Desktop, ViewerKey } from '@/generated/types';
import { NEEDS_WIREGUARD, VIEWER_ORDER } from '@common/viewers';

export { NEEDS_WIREGUARD };

export const VIEWER_STORAGE_PREFIX = 'viewer:last:';

/** Rank of a viewer in the default order (unknown ones last). */
export function viewerRank(viewer: ViewerKey): number {
  const index = VIEWER_ORDER.indexOf(viewer);
  return index === -1 ? VIEWER_ORDER.length : index;
}

/** The desktop's viewers in the default order (stable for equal ranks, duplicates dropped). */
export function orderedViewers(viewers: readonly ViewerKey[] | null | undefined): ViewerKey[] {
  return [...new Set(viewers ?? [])].sort((a, b) => viewerRank(a) - viewerRank(b));
}

/** Why a viewer cannot work for a desktop before the user tries it, or null when it can. */
export function viewerBlocker(
  desktop: Pick<Desktop, 'ip'>,
  viewer: ViewerKey,
): 'no_wireguard' | null {
  if (NEEDS_WIREGUARD.includes(viewer) && !desktop.ip) return 'no_wireguard';
  return null;
}

/** Local-storage key of a user's remembered viewer. */
export function viewerStorageKey(userId: string | null | undefined): string {
  return `${VIEWER_STORAGE_PREFIX}${userId ?? 'anonymous'}`;
}

/** Stores the user's last viewer choice. */
export function rememberViewer(userId: string | null | undefined, viewer: ViewerKey): void {
  try {
    localStorage.setItem(viewerStorageKey(userId), viewer);
  } catch {
    // storage unavailable: the default order applies
  }
}

/** The user's last choice, whatever the desktop. */
export function rememberedViewer(userId: string | null | undefined): ViewerKey | null {
  try {
    return (localStorage.getItem(viewerStorageKey(userId)) as ViewerKey | null) ?? null;
  } catch {
    return null;
  }
}

/**
 * The viewer "Open" uses for a desktop: the remembered choice when the desktop has it and it can
 * work, else the first usable viewer in the default order, else null.
 */
export function preferredViewer(
  desktop: Pick<Desktop, 'viewers' | 'ip'>,
  userId: string | null | undefined,
): ViewerKey | null {
  const usable = orderedViewers(desktop.viewers).filter(
    (viewer) => !viewerBlocker(desktop, viewer),
  );
  const last = rememberedViewer(userId);
  if (last && usable.includes(last)) return last;
  return usable[0] ?? null;
}
