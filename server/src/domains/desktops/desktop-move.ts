/**
 * Moving a stopped desktop to another hypervisor host (admins): its disk goes to the target
 * host's disks and every later start of the desktop goes there (it is pinned to the host: its
 * forced hypervisor), the host its runtime records is the target.
 *
 * Disks (`host-volumes.ts`): the host local keeps its disks as files in `<DATA_DIR>/disks`, a
 * libvirt host as volumes of its storage pool. The disk is copied through libvirt (between two
 * hosts' pools a `vol-download` streamed into a `vol-upload`; the template's chain copied along
 * when the target lacks it), the copy's progress on the desktop's card (its `queue` with the event
 * `copy_disk` and the percent done), then the old disk removed; while it is copied the desktop is
 * in `maintenance`. A disk already where the target keeps its disks is not copied.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { hostDiskDir } from '../../platform/hypervisor/host-volumes.ts';
import { copyProgress } from './copy-progress.ts';
import { assertHostExists } from './hypervisors.ts';

export { hostDiskDir };

/** Moves a stopped desktop to `hostId` (see the module comment); answers where its disk is. */
export async function moveDesktop(
  app: FastifyInstance,
  id: string,
  hostId: string,
): Promise<{ diskPath: string; copied: boolean }> {
  const row = await app.desktops.byId(id);
  if (!row) throw new ApiError('not_found', 'Desktop not found', 'not_found');
  await assertHostExists(app.db, hostId);
  const notStopped = () =>
    new ApiError('precondition_required', 'The desktop must be stopped', 'desktop_not_stopped');
  if (row.state !== 'stopped') throw notStopped();
  const source = row.diskPath ?? app.engine.diskPath(id);
  const target = path.join(hostDiskDir(app.config.dataDir, hostId), path.basename(source));
  const pin = { forcedHyp: hostId, runtime: { host: hostId } };
  if (path.resolve(source) === path.resolve(target)) {
    if (!(await app.desktops.update(id, pin, ['stopped']))) throw notStopped();
    return { diskPath: target, copied: false };
  }
  if (!(await app.desktops.update(id, { state: 'maintenance' }, ['stopped']))) throw notStopped();
  let diskPath: string;
  const progress = copyProgress((percent) =>
    app.desktops.update(id, { queue: { event: 'copy_disk', percent } }, ['maintenance']),
  );
  try {
    diskPath = await app.hypervisor.disks.copyDisk(
      source,
      hostId,
      row.templateId ? ((await app.templates.get(row.templateId))?.diskPath ?? null) : null,
      progress.report,
    );
    await progress.settled();
  } catch (err) {
    await progress.settled();
    await app.desktops.update(id, { state: 'stopped', queue: null }, ['maintenance']);
    throw err;
  }
  await app.desktops.update(id, { ...pin, state: 'stopped', diskPath, queue: null }, [
    'maintenance',
  ]);
  await app.hypervisor.deleteDisk(source);
  return { diskPath, copied: true };
}
