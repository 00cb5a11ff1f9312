/**
 * The disks of desktops: made when a desktop is created (an overlay on its template, or an empty
 * disk), verified (and remade from the template) by a retry, remade on request, and measured.
 */
import { existsSync } from 'node:fs';
import type { DesktopState } from '../../../../src/generated/types.ts';
import type { Hypervisor } from '../../platform/hypervisor/types.ts';
import type { DesktopStore, EngineDesktop, EngineLogger } from './types.ts';

/** What the disk operations need of the engine. */
export interface DiskParts {
  store: DesktopStore;
  driver: Hypervisor;
  log: EngineLogger;
  diskPath(id: string): string;
  mustGet(id: string): Promise<EngineDesktop>;
  start(id: string): Promise<DesktopState>;
}

/** `GET /desktop/updating/{id}` ("retry" on failed): verify the disk, then stopped or failed again. */
export async function verifyDisk(parts: DiskParts, id: string): Promise<DesktopState> {
  const desktop = await parts.mustGet(id);
  if (desktop.state !== 'failed') return desktop.state;
  if (!(await parts.store.update(id, { state: 'updating' }, ['failed'])))
    return (await parts.mustGet(id)).state;
  try {
    const path = desktop.disk_path ?? parts.diskPath(id);
    const present = await parts.driver.diskInfo(path).then(
      () => true,
      () => false,
    );
    if (!present) {
      if (!desktop.template_disk_path)
        throw new Error('The desktop disk is missing and there is no template to recreate it from');
      await parts.driver.prepareDisk({ path, backingFile: desktop.template_disk_path });
    }
    if ((await parts.driver.status(id)) !== 'absent') await parts.driver.stop(id);
    await parts.store.update(
      id,
      { state: 'stopped', detail: null, runtime: null, disk_path: path },
      ['updating'],
    );
    return 'stopped';
  } catch (err) {
    await parts.store.update(id, { state: 'failed', detail: (err as Error).message }, ['updating']);
    return 'failed';
  }
}

export async function createDiskNow(
  parts: DiskParts,
  id: string,
  options: { startAfter?: boolean },
): Promise<void> {
  const desktop = await parts.mustGet(id);
  // Made meanwhile (by another node), or no longer wanted.
  if (desktop.state !== 'creating') return;
  const path = desktop.disk_path ?? parts.diskPath(id);
  try {
    if (!existsSync(path)) {
      if (desktop.template_disk_path)
        await parts.driver.prepareDisk({
          path,
          backingFile: desktop.template_disk_path,
          ...(desktop.hardware.disk_size ? { sizeGiB: desktop.hardware.disk_size } : {}),
        });
      else await parts.driver.prepareDisk({ path, sizeGiB: desktop.hardware.disk_size ?? 1 });
    }
    const ready = await parts.store.update(
      id,
      { state: 'stopped', disk_path: path, detail: null },
      ['creating'],
    );
    if (ready && options.startAfter) await parts.start(id);
  } catch (err) {
    parts.log.warn({ err, id }, 'disk creation failed');
    await parts.store.update(id, { state: 'failed', detail: (err as Error).message }, ['creating']);
  }
}

/** Bytes a disk file takes on the host (0 when it is gone). */
export async function diskUsage(driver: Hypervisor, path: string): Promise<number> {
  return driver
    .diskInfo(path)
    .then((info) => info.actualSize)
    .catch(() => 0);
}

/** Replaces a stopped desktop's disk with a fresh overlay on its template's disk. */
export async function recreateDisk(
  parts: DiskParts,
  id: string,
  backingFile: string,
): Promise<void> {
  const desktop = await parts.mustGet(id);
  const path = desktop.disk_path ?? parts.diskPath(id);
  await parts.driver.deleteDisk(path);
  await parts.driver.prepareDisk({ path, backingFile });
}
