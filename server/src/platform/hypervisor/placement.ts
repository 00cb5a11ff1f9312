/**
 * Placement: which hypervisor host a desktop's start goes to. A pure function of the hosts as the
 * database has them and of what the desktop needs, so every rule is tested without a VM.
 *
 * A host takes the start when it is enabled, not draining (no new starts there; its running
 * desktops stay), answered its last probe recently, offers every GPU profile the desktop has that
 * some host lists (a profile no host lists, such as the demo's simulated GPUs, runs anywhere; once a
 * host lists it, only the hosts that list it take it), and keeps enough memory after the start (its capacity minus the memory of the desktops running or
 * starting there). Of those, the one with the most free memory after the start wins (the name
 * breaks a tie). A desktop pinned to a host (its forced hypervisor) goes there or nowhere.
 */

/** A host as placement sees it. */
export interface PlacementHost {
  id: string;
  enabled: boolean;
  draining: boolean;
  /** When it last answered a probe; null: never. */
  lastSeen: Date | null;
  /** Memory capacity (MiB). */
  memoryMib: number;
  /** Memory of the desktops running or starting there (MiB). */
  usedMemoryMib: number;
  /** The GPU profiles it offers. */
  gpuProfiles: readonly string[];
}

/** What the started desktop needs. */
export interface PlacementRequest {
  /** Its memory (MiB). */
  memoryMib: number;
  /** Its GPU profiles (none: any host). */
  gpuProfiles: readonly string[];
  /** The host it is pinned to; null: placement chooses. */
  forced: string | null;
}

/** Why no host takes the start: the error code the start answers. */
export type PlacementRefusal =
  /** No host is enabled, answering, not draining and offers the desktop's GPU profile. */
  | 'hypervisors_not_available'
  /** Hosts could take it, but none has the memory left. */
  | 'hypervisors_full'
  /** The host it is pinned to is gone, disabled, draining, silent or lacks its GPU profile. */
  | 'hypervisor_forced_unavailable';

export type Placement = { host: string; freeAfterMib: number } | { refused: PlacementRefusal };

export interface PlacementClock {
  now: Date;
  /** A host whose last answer is older than this does not take starts (ms). */
  freshMs: number;
  /** The memory a host may promise, as a percentage of its capacity (default 100). */
  memoryOvercommitPercent?: number;
}

/** Whether the host may take a start needing these (listed) GPU profiles, memory aside. */
export function hostAccepts(
  host: PlacementHost,
  profiles: readonly string[],
  clock: PlacementClock,
): boolean {
  const fresh =
    host.lastSeen !== null && clock.now.getTime() - host.lastSeen.getTime() <= clock.freshMs;
  return (
    host.enabled &&
    !host.draining &&
    fresh &&
    profiles.every((profile) => host.gpuProfiles.includes(profile))
  );
}

/** The host of a start, or why there is none. */
export function placeDesktop(
  hosts: readonly PlacementHost[],
  request: PlacementRequest,
  clock: PlacementClock,
): Placement {
  const listed = new Set(hosts.flatMap((h) => h.gpuProfiles));
  const profiles = request.gpuProfiles.filter((p) => listed.has(p));
  const pinned = request.forced === null ? null : hosts.filter((h) => h.id === request.forced);
  const accepting = (pinned ?? hosts).filter((h) => hostAccepts(h, profiles, clock));
  if (accepting.length === 0)
    return { refused: pinned ? 'hypervisor_forced_unavailable' : 'hypervisors_not_available' };
  const withRoom = accepting
    .map((h) => ({
      host: h.id,
      freeAfterMib:
        Math.floor((h.memoryMib * (clock.memoryOvercommitPercent ?? 100)) / 100) -
        h.usedMemoryMib -
        request.memoryMib,
    }))
    .filter((c) => c.freeAfterMib >= 0)
    .sort((a, b) => b.freeAfterMib - a.freeAfterMib || a.host.localeCompare(b.host));
  return withRoom[0] ?? { refused: 'hypervisors_full' };
}
