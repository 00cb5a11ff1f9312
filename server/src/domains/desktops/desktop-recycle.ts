/**
 * A stopped desktop to the recycle bin: its VM gone, its row moved into one entry with its disk,
 * which stays until the entry is purged, and with its bastion target.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { OwnedDesktopRow } from './desktops-repository.ts';
import type { DesktopContext } from './desktop-context.ts';
import type { DesktopWithTargets } from '../../platform/repository/desktop-bastion-targets.ts';

export async function recycleDesktop(
  ctx: DesktopContext,
  auth: AuthContext,
  desktop: OwnedDesktopRow,
): Promise<void> {
  const { app, db } = ctx;
  const diskPath = desktop.diskPath ?? app.engine.diskPath(desktop.id);
  const size = await app.engine.diskUsage(diskPath);
  await app.engine.destroy(desktop.id, { deleteDisk: false });
  const { ownerRole: _ownerRole, ...row } = desktop;
  // The row leaves and its entry arrives in one transaction: of two deletes at once one
  // claims the row and the other finds it gone, so a desktop makes one entry and is never lost.
  const { entry, removed } = await db.transaction(async (tx) => {
    const gone: DesktopWithTargets | undefined = await app.desktops.table.remove(desktop.id, tx);
    if (!gone) throw new ApiError('not_found', 'Desktop not found', 'not_found');
    const created = await app.recycleBin.create(
      {
        id: randomUUID(),
        ownerId: desktop.userId,
        agentId: auth.userId,
        itemType: 'desktop',
        itemName: desktop.name,
        status: 'recycled',
        size,
        data: {
          desktops: [
            { ...row, bastionTargets: gone.bastionTargets, runtime: {}, state: 'stopped' },
          ],
          storages: [
            {
              id: desktop.id,
              directory_path: diskPath,
              status: 'recycled',
              actual_size: size,
            },
          ],
          agent_name: auth.name,
        },
      },
      tx,
    );
    return { entry: created, removed: gone };
  });
  app.desktops.announceRemoved(removed);
  app.events.publish({
    name: 'recycle-bins.created',
    payload: {
      id: entry.id,
      item_type: 'desktop',
      item_name: desktop.name,
      status: 'recycled',
      size,
      accessed: Math.floor(entry.accessed.getTime() / 1000),
      desktops: 1,
      templates: 0,
      deployments: 0,
      storages: 1,
    },
    ownerId: desktop.userId,
  });
}
