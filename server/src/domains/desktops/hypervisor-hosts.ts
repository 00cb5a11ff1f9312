/**
 * The hypervisor hosts at run time: one driver per host behind the registry (`host-drivers.ts`),
 * the placement of every start (`placement.ts` on the hosts as the database has them now), and
 * the health probe.
 *
 * Health: every `probeMs` the leader asks each enabled host (and each that still runs desktops)
 * whether it answers, within `probeTimeoutMs`; an answer is its `last_seen`. A host that stops
 * answering (its probe fails, or times out twice in a row: a host busy creating a class's domains
 * may answer one probe late) turns the desktops it runs (or starts) `failed`, with a detail that
 * names it, and takes no start until it answers again (placement skips a host not seen for
 * `freshMs`); when it answers again, `hostReturned` adopts the domains it still runs and settles
 * the rest (`host-return.ts`), so a desktop started elsewhere meanwhile never runs on two hosts.
 * Every node keeps its drivers in step with the hosts at the same period (a deleted or disabled
 * host's driver is dropped once it runs nothing).
 */
import { join } from 'node:path';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Db } from '../../platform/db/client.ts';
import { createHypervisorDriver } from '../../platform/hypervisor/driver-factory.ts';
import { HostDrivers, LOCAL_HOST } from '../../platform/hypervisor/host-drivers.ts';
import { hostDiskDir, volumeHostOf } from '../../platform/hypervisor/host-volumes.ts';
import { placeDesktop, type PlacementRefusal } from '../../platform/hypervisor/placement.ts';
import type { Accel, Hypervisor } from '../../platform/hypervisor/types.ts';
import { markSeen, readHosts, uriWithKey } from './hypervisors.ts';
import { profilesOf } from './desktop-rules.ts';
import type { EngineDesktop } from './types.ts';

export interface HostSettings {
  db: Db;
  dataDir: string;
  accel: Accel;
  /** The driver of the host `local`. */
  local: Hypervisor;
  diskOwner?: { uid: number; gid: number } | undefined;
  /** The bridge of each network by its id (a libvirt host's cards go on it when it has it). */
  bridges?: () => Promise<ReadonlyMap<string, string>>;
  /** The host a desktop's runtime records. */
  hostOf(id: string): Promise<string | null>;
  /** Whether this process probes the hosts (the leader). */
  probes(): boolean;
  /** Turns the desktops running or starting on a host `failed` with `detail`. */
  failDesktopsOn(hostId: string, detail: string): Promise<void>;
  /** A host that was silent answers again: its desktops and domains are settled. */
  hostReturned(hostId: string, driver: Hypervisor): Promise<void>;
  /** Makes the driver of a libvirt host (default: the libvirt driver of its URI). */
  make?: (host: {
    id: string;
    uri: string;
    sshKey: string | null;
    consoleAddress: string;
  }) => Hypervisor;
  warn(obj: object, msg: string): void;
  probeMs?: number;
  probeTimeoutMs?: number;
  freshMs?: number;
  /** The memory a host may promise, as a percentage of its capacity (default 100). */
  memoryOvercommitPercent?: number;
}

export interface HypervisorHosts {
  drivers: HostDrivers;
  /** The host a start goes to; throws the refusal (503 with its code). */
  place(desktop: EngineDesktop): Promise<string>;
  /** Syncs the drivers with the hosts and probes them once (the first round, before adoption). */
  refresh(): Promise<void>;
  /** A round as soon as none runs (after a host changed). */
  refreshSoon(): void;
  /** Starts the periodic probe. */
  start(): void;
  close(): void;
}

/** The answer to a start no host takes (503, with the refusal's code). */
function refusal(code: PlacementRefusal): ApiError {
  switch (code) {
    case 'hypervisors_full':
      return new ApiError(
        'service_unavailable',
        'No hypervisor host has the memory left for the desktop',
        'hypervisors_full',
      );
    case 'hypervisor_forced_unavailable':
      return new ApiError(
        'service_unavailable',
        'The hypervisor host the desktop is pinned to can not start it now',
        'hypervisor_forced_unavailable',
      );
    default:
      return new ApiError(
        'service_unavailable',
        'No hypervisor host can start the desktop now',
        'hypervisors_not_available',
      );
  }
}

export function createHypervisorHosts(settings: HostSettings): HypervisorHosts {
  const probeMs = settings.probeMs ?? 2000;
  const probeTimeoutMs = settings.probeTimeoutMs ?? 4000;
  const freshMs = settings.freshMs ?? 10_000;
  const make =
    settings.make ??
    ((host) =>
      createHypervisorDriver({
        dataDir: join(settings.dataDir, 'hosts', host.id),
        accel: settings.accel,
        hypervisorUri: uriWithKey(host.uri, host.sshKey),
        diskOwner: settings.diskOwner,
        consoleAddress: host.consoleAddress,
        volumeDir: hostDiskDir(settings.dataDir, host.id),
        bridges: settings.bridges,
        log: (line) => settings.warn({ host: host.id }, line),
      }));
  const drivers = new HostDrivers({
    local: settings.local,
    make: (host) =>
      make({
        id: host.id,
        uri: host.uri ?? '',
        sshKey: host.sshKey,
        consoleAddress: host.consoleAddress,
      }),
    hostOf: settings.hostOf,
    diskOwner: settings.diskOwner,
    dataDir: settings.dataDir,
    warn: settings.warn,
  });
  /** Hosts that did not answer their last probe (their desktops were failed once). */
  const down = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  /** When the probe round under way began (ms since the epoch). */
  let roundSince = 0;

  /** Hosts whose last probe timed out (a second one in a row makes them silent). */
  const late = new Set<string>();

  const answers = (hostId: string): Promise<'yes' | 'late' | 'no'> =>
    new Promise((resolve) => {
      setTimeout(() => resolve('late'), probeTimeoutMs).unref();
      drivers.pingHost(hostId).then(
        () => resolve('yes'),
        () => resolve('no'),
      );
    });

  const probe = async (hostId: string) => {
    const answer = await answers(hostId);
    if (answer === 'late' && !late.has(hostId) && !down.has(hostId)) {
      late.add(hostId);
      settings.warn({ host: hostId }, 'hypervisor host answers late');
      return;
    }
    late.delete(hostId);
    if (answer === 'yes') {
      const returned = down.delete(hostId);
      await markSeen(settings.db, hostId);
      const driver = drivers.driverOf(hostId);
      if (returned && driver) await settings.hostReturned(hostId, driver);
      return;
    }
    if (down.has(hostId)) return;
    down.add(hostId);
    settings.warn({ host: hostId }, 'hypervisor host does not answer');
    await settings.failDesktopsOn(hostId, `The hypervisor host ${hostId} does not answer`);
  };

  const refresh = async () => {
    const hosts = await readHosts(settings.db);
    await drivers.sync(hosts);
    if (!settings.probes()) return;
    const probed = hosts.filter((h) => h.enabled || h.running > 0 || h.id === LOCAL_HOST);
    await Promise.all(probed.map((h) => probe(h.id)));
  };

  const tick = () => {
    if (round) return;
    roundSince = Date.now();
    round = refresh()
      .catch((err: unknown) => settings.warn({ err }, 'hypervisor probe failed'))
      .finally(() => {
        round = undefined;
        // A round longer than a host's freshness lets its hosts look silent to placement.
        const ms = Date.now() - roundSince;
        if (ms > freshMs / 2) settings.warn({ ms }, 'hypervisor probe round slow');
      });
  };

  return {
    drivers,
    async place(desktop) {
      // A host this process saw fall silent takes no start, however recent its last answer.
      const hosts = (await readHosts(settings.db)).map((h) =>
        down.has(h.id) ? { ...h, lastSeen: null } : h,
      );
      const placed = placeDesktop(
        hosts,
        {
          memoryMib: Math.round((desktop.hardware.memory ?? 1) * 1024),
          gpuProfiles: profilesOf(desktop.hardware),
          // A disk kept in a host's pool starts there (a move takes it elsewhere).
          forced:
            (desktop.disk_path && volumeHostOf(settings.dataDir, desktop.disk_path)) ??
            desktop.forced_hyp ??
            null,
        },
        { now: new Date(), freshMs, memoryOvercommitPercent: settings.memoryOvercommitPercent },
      );
      if ('host' in placed) return placed.host;
      // Why, as this process saw it: which hosts, how long since each answered, and whether it
      // probes them at all (only the leader does) and a round is under way.
      const now = Date.now();
      settings.warn(
        {
          refused: placed.refused,
          desktop: desktop.id,
          probing: settings.probes(),
          roundMs: round ? now - roundSince : null,
          hosts: hosts.map((h) => ({
            id: h.id,
            enabled: h.enabled,
            draining: h.draining,
            seenMsAgo: h.lastSeen ? now - h.lastSeen.getTime() : null,
            silent: down.has(h.id),
          })),
        },
        'no hypervisor host takes the start',
      );
      throw refusal(placed.refused);
    },
    refresh,
    refreshSoon: tick,
    start() {
      timer = setInterval(tick, probeMs);
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
    },
  };
}
