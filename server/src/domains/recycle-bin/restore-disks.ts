/**
 * Restored desktops and their disk files: a desktop put back whose disk file is gone is failed
 * at once (the boot disk check says the same of the desktops it finds so).
 */
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { volumeHostOf } from '../../platform/hypervisor/host-volumes.ts';

/** Why a desktop whose disk is gone is failed. */
export const MISSING_DISK_DETAIL = 'The disk file of this desktop is missing';

const exists = (path: string) =>
  stat(path).then(
    (st) => st.isFile(),
    () => false,
  );

/**
 * Desktops just put back by a recycle-bin restore whose disk file is gone are failed at once, with
 * the same reason as the boot check gives, so none waits for the next start of the portal to be
 * flagged (nor boots on a missing disk); "retry" makes a new disk from its template. A file of that
 * name in the disks folder (the data directory moved) leaves the desktop as it is, as at boot.
 * Answers the ids failed.
 */
export async function failRestoredWithoutDisk(
  app: FastifyInstance,
  ids: readonly string[],
): Promise<string[]> {
  const disksDir = resolve(app.config.dataDir, 'disks');
  const failed: string[] = [];
  for (const id of ids) {
    const d = await app.desktops.table.get(id);
    if (!d || d.state !== 'stopped') continue;
    const path = d.diskPath ?? join(disksDir, `${d.id}.qcow2`);
    // A volume of a hypervisor host's storage pool is its host's to check (at the next start).
    if (volumeHostOf(app.config.dataDir, path) !== null) continue;
    if ((await exists(path)) || (await exists(join(disksDir, basename(path))))) continue;
    if (
      await app.desktops.update(
        d.id,
        { state: 'failed', currentAction: null, detail: MISSING_DISK_DETAIL },
        ['stopped'],
      )
    ) {
      failed.push(d.id);
      app.log.warn({ desktop: d.id }, 'restore: desktop disk missing, desktop failed');
    }
  }
  return failed;
}
