/**
 * Booting a desktop the start queue hands over: the driver starts its spec, and the desktop
 * becomes `started` (its VM stopped again if the desktop left `starting` meanwhile) or `failed`
 * with the reason. Its VNC port is announced as soon as QEMU runs (`vncReady`), before the state
 * is written, so a console opened with the start connects while the row is written. A host that
 * keeps its disks elsewhere (a libvirt host's storage pool) gets the desktop's disk first, the
 * copy's progress on the card (`queue`: event `copy_disk`, percent done), and the disk's new path
 * is recorded before the portal's copy goes; its media (ISOs, floppies) follow the same way (event
 * `copy_media`), once per host, the portal's files staying.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import {
  HypervisorError,
  type DomainSpec,
  type Hypervisor,
} from '../../platform/hypervisor/types.ts';
import type { DesktopStore, EngineDesktop, EngineLogger } from './types.ts';

import { copyProgress } from './copy-progress.ts';
import { domainSpecOf } from './domain-spec.ts';
import { desktopState } from '../../../../src/generated/policy.ts';

/** The state a boot runs in: its writes apply only while the desktop is still in it. */
const BOOTING = [desktopState.starting];

/** What a boot needs of the engine. */
export interface BootParts {
  store: DesktopStore;
  driver: Hypervisor;
  idle: IdleManager | undefined;
  log: EngineLogger;
  diskPath(id: string): string;
  /** See DesktopEngineOptions.vncReady. */
  vncReady?: ((id: string, vncPort: number | null) => void) | undefined;
}

/** Boots the desktop `id`; `fresh`: its row as the start just wrote it (else read now). */
export async function bootDesktop(
  parts: BootParts,
  id: string,
  fresh?: EngineDesktop,
): Promise<void> {
  const desktop = fresh ?? (await parts.store.get(id));
  if (!desktop || desktop.state !== desktopState.starting) return;
  let announced = false;
  try {
    const spec = await domainSpecOf(desktop, {
      mediaPaths: (ids) => parts.store.mediaPaths(ids),
      diskPath: parts.diskPath,
    });
    await stageDisk(parts, id, spec);
    await stageMedia(parts, id, spec);
    parts.log.debug?.({ id, phase: 'boot.spawn' }, 'console path');
    const rt = await parts.driver.start(spec);
    parts.log.debug?.({ id, phase: 'boot.running' }, 'console path');
    announced = true;
    parts.vncReady?.(id, rt.vncPort);
    const runtime = {
      pid: rt.pid,
      vncPort: rt.vncPort,
      spicePort: rt.spicePort,
      spiceTls: rt.spiceTls,
      vncPassword: spec.vncPassword,
      spicePassword: spec.spicePassword,
      startedAt: rt.startedAt,
      ...(desktop.host ? { host: desktop.host } : {}),
      ...(rt.consoleHost ? { consoleHost: rt.consoleHost } : {}),
    };
    const started = await parts.store.update(
      id,
      { state: desktopState.started, runtime, queue: null },
      BOOTING,
    );
    if (!started) {
      // Stopped or deleted while starting: do not leave an orphan VM behind.
      await parts.driver.stop(id).catch(() => undefined);
      return;
    }
    parts.log.debug?.({ id, phase: 'boot.started' }, 'console path');
    parts.idle?.started(id);
  } catch (err) {
    const detail =
      err instanceof HypervisorError || err instanceof ApiError
        ? err.message
        : 'Unable to start the desktop';
    parts.log.warn({ err, id }, 'desktop start failed');
    await parts.store.update(
      id,
      { state: desktopState.failed, detail, runtime: null, queue: null },
      BOOTING,
    );
  } finally {
    if (announced) parts.vncReady?.(id, null);
  }
}

/** Brings the spec's media where the start's host keeps them (see the module comment). */
async function stageMedia(parts: BootParts, id: string, spec: DomainSpec): Promise<void> {
  const { isos, floppies } = spec.hardware;
  if (!parts.driver.stageMedia || isos.length + floppies.length === 0) return;
  const progress = copyProgress((percent) =>
    parts.store.update(id, { queue: { event: 'copy_media', percent } }, BOOTING),
  );
  const staged = await parts.driver.stageMedia(id, [...isos, ...floppies], progress.report);
  await progress.settled();
  spec.hardware.isos = staged.slice(0, isos.length);
  spec.hardware.floppies = staged.slice(isos.length);
}

/** Brings the spec's disk where the start's host keeps its disks (see the module comment). */
async function stageDisk(parts: BootParts, id: string, spec: DomainSpec): Promise<void> {
  if (!parts.driver.stageDisk || !spec.diskPath) return;
  const from = spec.diskPath;
  const progress = copyProgress((percent) =>
    parts.store.update(id, { queue: { event: 'copy_disk', percent } }, BOOTING),
  );
  const staged = await parts.driver.stageDisk(id, from, progress.report);
  await progress.settled();
  if (staged === from) return;
  await parts.store.update(id, { disk_path: staged, queue: null });
  spec.diskPath = staged;
  await parts.driver
    .deleteDisk(from)
    .catch((err: unknown) => parts.log.warn({ err, id }, 'the portal copy of a disk stayed'));
}
