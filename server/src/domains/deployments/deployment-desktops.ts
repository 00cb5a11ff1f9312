/**
 * The desktops of a deployment as a whole: made in the background after their rows are committed
 * (a few disks at a time), deleted for good, checked idle or not being created, and recreated
 * (the missing ones made, those of users who are no longer targets deleted).
 */
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import type { DeploymentRow, DesktopRow } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';
import { lockQuotaScopes, checkDeploymentQuota, RUNNING_STATES } from '../quotas/index.ts';
import { audienceOf } from './deployment-access.ts';
import { IDLE_STATES, type DeploymentDeps } from './deployment-deps.ts';
import type { DeploymentTargets } from './deployment-targets.ts';

/** Disks made at once while a deployment is created. */
const CREATE_CONCURRENCY = 4;

export type DeploymentDesktops = ReturnType<typeof deploymentDesktops>;

export function deploymentDesktops(
  {
    app,
    creating,
    events,
    deploymentFor,
  }: Pick<DeploymentDeps, 'app' | 'creating' | 'events' | 'deploymentFor'>,
  { targetUsers, insertDesktops, ownerSubject }: DeploymentTargets,
) {
  const { db } = app;

  /**
   * After the rows are committed: the users of a visible deployment see their new desktop, the
   * owners see the rows, and the disks are made in the background.
   */
  const announceAndBuild = async (row: DeploymentRow, ids: readonly string[]) => {
    if (row.visible)
      for (const id of ids) await app.desktops.publishCurrent(id, 'desktops.created');
    events.touch(row.id, ids);
    if (ids.length === 0) return;
    const audience = audienceOf(row);
    creating.add(row.id);
    for (const ownerId of audience)
      app.events.publish({
        name: 'deployments.creatingDesktops',
        payload: { deployment_id: row.id },
        ownerId,
      });
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift())
        await app.engine.createDisk(id);
    };
    app.engine.background(
      Promise.all(Array.from({ length: Math.min(CREATE_CONCURRENCY, ids.length) }, worker)).finally(
        () => {
          creating.delete(row.id);
          events.touch(row.id);
          for (const ownerId of audience)
            app.events.publish({
              name: 'deployments.creatingDesktopsEnded',
              payload: { deployment_id: row.id },
              ownerId,
            });
        },
      ),
      'deployment desktops creation failed',
      row.id,
    );
  };

  /** Deletes desktops for good (VM stopped, disk deleted) and tells their users and the owners. */
  const removeDesktops = async (rows: readonly DesktopRow[]) => {
    for (const d of rows) {
      await app.engine.destroy(d.id, { deleteDisk: true });
      app.viewers.closeDesktop(d.id);
      await app.desktops.remove(d.id);
      if (d.tag) events.touch(d.tag, [d.id]);
    }
  };

  const assertIdle = (rows: readonly { row: DesktopRow }[] | readonly DesktopRow[]) => {
    const busy = rows
      .map((r) => ('row' in r ? r.row : r))
      .find((d) => !IDLE_STATES.includes(d.state));
    if (busy)
      throw new ApiError(
        'precondition_required',
        'The deployment desktops must be stopped first',
        'deployment_stop',
        { id: busy.id, state: busy.state },
      );
  };

  const assertNotCreating = async (row: DeploymentRow) => {
    const counts = (await app.deployments.counts([row.id])).get(row.id);
    if (creating.has(row.id) || (counts?.creatingDesktops ?? 0) > 0)
      throw new ApiError(
        'precondition_required',
        'The deployment desktops are still being created',
        'deployment_creating',
        { id: row.id },
      );
  };

  /** Recreate: the missing desktops made, those of users who are no longer targets deleted. */
  const recreateNow = async (row: DeploymentRow) => {
    await assertNotCreating(row);
    const template = row.templateId ? await app.templates.get(row.templateId) : undefined;
    const owner = await app.users.byId(row.userId);
    const targets = await targetUsers(row, owner?.role ?? null);
    const present = await app.deployments.desktopsOf(row.id);
    const wanted = new Set(targets.map((t) => t.id));
    const leaving = present.filter((d) => !wanted.has(d.row.userId)).map((d) => d.row);
    await removeDesktops(leaving);
    const have = new Set(present.map((d) => d.row.userId));
    const missing = targets.filter((t) => !have.has(t.id));
    if (missing.length === 0) return;
    if (!template?.diskPath || template.status !== 'ready')
      throw new ApiError(
        'precondition_required',
        'The template of this deployment no longer exists',
        'parent_template_not_found',
        { id: row.templateId },
      );
    const subject = await ownerSubject(row);
    const ids = await db.transaction(async (tx) => {
      const query = queryOn(tx);
      await lockQuotaScopes(query, subject);
      await checkDeploymentQuota(query, subject, {
        newDeployment: false,
        desktops: missing.length,
      });
      return insertDesktops(row, template, missing, tx);
    });
    await announceAndBuild(row, ids);
  };

  return {
    announceAndBuild,
    removeDesktops,
    assertIdle,
    assertNotCreating,
    recreateNow,

    /** Starts every stopped desktop (failures are left on the desktops). */
    async startAll(auth: AuthContext, id: string): Promise<void> {
      const row = await deploymentFor(auth, id);
      for (const d of await app.deployments.desktopsOf(row.id))
        if (inSet(desktopStates.startable, d.row.state))
          await app.engine.start(d.row.id).catch((err: unknown) => {
            app.log.warn({ err, desktop: d.row.id }, 'deployment start failed');
          });
    },

    async stopAll(auth: AuthContext, id: string): Promise<void> {
      const row = await deploymentFor(auth, id);
      for (const d of await app.deployments.desktopsOf(row.id))
        if (inSet(RUNNING_STATES, d.row.state))
          await app.engine.stop(d.row.id).catch((err: unknown) => {
            app.log.warn({ err, desktop: d.row.id }, 'deployment stop failed');
          });
    },
  };
}
