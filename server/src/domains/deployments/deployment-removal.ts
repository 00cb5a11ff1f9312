/**
 * Deleting a deployment whose desktops are all stopped (to the recycle bin as one entry with its
 * desktops and their disks, or for good), and what its audience is told when another delete
 * recycled it or a restore put it back.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../platform/http/api-error.ts';
import type { DeploymentRow, DesktopRow } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { audienceOf } from './deployment-access.ts';
import type { DeploymentDeps } from './deployment-deps.ts';
import type { DeploymentDesktops } from './deployment-desktops.ts';

export function deploymentRemoval(
  { app, creating, events, answers, deploymentFor, publishToAudience }: DeploymentDeps,
  { removeDesktops, assertIdle }: DeploymentDesktops,
) {
  const { db } = app;
  const { listItem } = answers;

  return {
    /**
     * Deletes a deployment whose desktops are all stopped: one recycle-bin entry with the
     * deployment, its desktops and their disks, or everything for good when asked or when the
     * retention is "immediate". Co-owners can not.
     */
    async delete(auth: AuthContext, id: string, permanent: boolean): Promise<void> {
      const row = await deploymentFor(auth, id, 'own');
      if (creating.has(row.id))
        throw new ApiError(
          'precondition_required',
          'The deployment desktops are still being created',
          'deployment_creating',
          { id: row.id },
        );
      const present = await app.deployments.desktopsOf(row.id);
      assertIdle(present);
      const cutoff = await app.recycleBinService.cutoffHours();
      const audience = audienceOf(row);
      const announceGone = () => {
        for (const ownerId of audience)
          app.events.publish({
            name: 'deployments.deleted',
            payload: { id: row.id, version: row.version + 1 },
            ownerId,
          });
      };
      if (permanent || cutoff === 0) {
        await removeDesktops(present.map((d) => d.row));
        await app.deployments.remove(row.id);
        announceGone();
        events.forget(row.id);
        app.log.info({ deployment: row.id, agent: auth.userId }, 'deployment deleted for good');
        return;
      }
      const storages: {
        id: string;
        directory_path: string;
        status: string;
        actual_size: number;
      }[] = [];
      for (const d of present) {
        await app.engine.destroy(d.row.id, { deleteDisk: false });
        app.viewers.closeDesktop(d.row.id);
        const diskPath = d.row.diskPath ?? app.engine.diskPath(d.row.id);
        storages.push({
          id: d.row.id,
          directory_path: diskPath,
          status: 'recycled',
          actual_size: await app.engine.diskUsage(diskPath),
        });
      }
      const size = storages.reduce((sum, s) => sum + s.actual_size, 0);
      const { entry, removed } = await db.transaction(async (tx) => {
        const gone: DesktopRow[] = [];
        for (const d of present) {
          const r = await app.desktops.table.remove(d.row.id, tx);
          if (r) gone.push(r);
        }
        const deleted = await app.deployments.remove(row.id, tx);
        if (!deleted) throw new ApiError('not_found', 'Deployment not found', 'not_found');
        const created = await app.recycleBin.create(
          {
            id: randomUUID(),
            ownerId: row.userId,
            agentId: auth.userId,
            itemType: 'deployment',
            itemName: row.name,
            status: 'recycled',
            size,
            data: {
              deployments: [deleted],
              desktops: gone.map((g) => ({ ...g, runtime: {}, state: 'stopped', queue: null })),
              storages,
              agent_name: auth.name,
            },
          },
          tx,
        );
        return { entry: created, removed: gone };
      });
      for (const r of removed) app.desktops.announceRemoved(r);
      announceGone();
      events.forget(row.id);
      app.events.publish({
        name: 'recycle-bins.created',
        payload: {
          id: entry.id,
          item_type: 'deployment',
          item_name: row.name,
          status: 'recycled',
          size,
          accessed: Math.floor(entry.accessed.getTime() / 1000),
          desktops: removed.length,
          templates: 0,
          deployments: 1,
          storages: storages.length,
        },
        ownerId: row.userId,
      });
      app.log.info(
        { deployment: row.id, agent: auth.userId },
        'deployment sent to the recycle bin',
      );
    },

    /** Deployments another delete sent to the recycle bin: their audience no longer sees them. */
    recycled(rows: readonly DeploymentRow[]): void {
      for (const row of rows) {
        for (const ownerId of audienceOf(row))
          app.events.publish({
            name: 'deployments.deleted',
            payload: { id: row.id, version: row.version + 1 },
            ownerId,
          });
        events.forget(row.id);
      }
    },

    /** After a recycle-bin restore put deployments back: their owners see them again. */
    async restored(ids: readonly string[]): Promise<void> {
      for (const id of ids) {
        const row = await app.deployments.get(id);
        if (!row) continue;
        publishToAudience(row, 'deployments.created', await listItem(row));
        events.touch(
          row.id,
          (await app.deployments.desktopsOf(row.id)).map((d) => d.row.id),
        );
      }
    },
  };
}
