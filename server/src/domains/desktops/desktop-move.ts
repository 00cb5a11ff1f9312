/**
 * Moving a stopped desktop to another hypervisor host (admins): its disk goes to the target
 * host's disk directory and every later start of the desktop goes there (it is pinned to the
 * host: its forced hypervisor), the host its runtime records is the target.
 *
 * Disk directories: the host local keeps its disks in `<DATA_DIR>/disks`, another host in
 * `<DATA_DIR>/hosts/<id>/disks` (DATA_DIR is where every host reaches the disks: this machine or
 * a shared filesystem). When the directories differ the disk file is copied (a template overlay
 * is copied as the overlay: its template stays where it is, at the same path for every host),
 * given to the hosts' disk owner, and the old file removed; while it is copied the desktop is in
 * `maintenance`. A disk already in the target's directory is not copied.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { LOCAL_HOST } from '../../platform/hypervisor/host-drivers.ts';
import { giveDiskTo } from '../../platform/hypervisor/disk-images.ts';
import { assertHostExists } from './hypervisors.ts';

/** The directory a host keeps its desktops' disks in. */
export function hostDiskDir(dataDir: string, hostId: string): string {
  return hostId === LOCAL_HOST
    ? path.join(dataDir, 'disks')
    : path.join(dataDir, 'hosts', hostId, 'disks');
}

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
  try {
    await fsp.mkdir(path.dirname(target), { recursive: true });
    // The host's QEMU account walks to its disks (the run directories below stay 0700).
    for (
      let dir = path.dirname(target);
      dir.startsWith(app.config.dataDir) && dir !== app.config.dataDir;
      dir = path.dirname(dir)
    )
      await fsp.chmod(dir, 0o755);
    await fsp.copyFile(source, target);
    await giveDiskTo(target, app.config.hypervisorDiskOwner);
  } catch (err) {
    await fsp.rm(target, { force: true });
    await app.desktops.update(id, { state: 'stopped' }, ['maintenance']);
    throw err;
  }
  await app.desktops.update(id, { ...pin, state: 'stopped', diskPath: target }, ['maintenance']);
  await fsp.rm(source, { force: true });
  return { diskPath: target, copied: true };
}
