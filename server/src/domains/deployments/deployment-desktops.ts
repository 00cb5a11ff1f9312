/**
 * The desktops of a deployment as a whole: made by a job after their rows are committed (a few
 * disks at a time, on one node, taken over by another when that node dies), started by a job,
 * deleted for good, checked idle or not being created, and recreated (the missing ones made,
 * those of users who are no longer targets deleted).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../platform/http/api-error.ts';
import type { PlacementRefusal } from '../../platform/hypervisor/placement.ts';
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
/** The job that makes a deployment's disks, and the one that starts its desktops. */
export const DISKS_JOB = 'deployment.disks';
export const START_JOB = 'deployment.start-all';
/** How soon disks being made elsewhere are looked at again. */
const RETRY_MS = 250;
/** A start-all's tries of a start no host took for want of an answering host, and their spacing. */
const REFUSED_TRIES = 5;
const REFUSED_RETRY_MS = 2000;

/** The refusal of a start because no hypervisor host answered lately (not a full one). */
const HOST_SILENCE: PlacementRefusal = 'hypervisors_not_available';
const isHostSilence = (err: unknown): boolean =>
  err instanceof ApiError && err.descriptionCode === HOST_SILENCE;
/** Jobs of each kind one process runs at once. */
const DISKS_JOBS_AT_ONCE = 4;

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
   * Makes the disks of the deployment's desktops still `creating`, a few at a time, and tells its
   * audience when they are made. Run as a job (one process at a time; a process that dies leaves
   * it to another): it reads what is left from the database, so a job taken over goes on where the
   * dead process stopped, and each disk is made under its desktop's lease (desktop engine).
   */
  const buildDisks = async (deploymentId: string, signal: AbortSignal) => {
    const row = await app.deployments.get(deploymentId);
    if (!row) return;
    creating.add(row.id);
    try {
      const tried = new Set<string>();
      for (;;) {
        const queue = (await app.deployments.desktopsOf(row.id))
          .filter((d) => d.row.state === 'creating' && !tried.has(d.row.id))
          .map((d) => d.row.id);
        if (queue.length === 0) break;
        const elsewhere: string[] = [];
        const worker = async () => {
          for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
            signal.throwIfAborted();
            if (await app.engine.createDisk(id)) tried.add(id);
            else elsewhere.push(id);
          }
        };
        await Promise.all(
          Array.from({ length: Math.min(CREATE_CONCURRENCY, queue.length) }, worker),
        );
        if (elsewhere.length === 0) break;
        // Being made by another process (a node that died holds their leases until they expire):
        // looked at again shortly.
        await sleep(Math.min(RETRY_MS, app.work.leaseMs / 3), undefined, { signal });
      }
    } finally {
      creating.delete(row.id);
    }
    events.touch(row.id);
    for (const ownerId of audienceOf(row))
      app.events.publish({
        name: 'deployments.creatingDesktopsEnded',
        payload: { deployment_id: row.id },
        ownerId,
      });
  };
  app.work.handle(DISKS_JOB, (job) => buildDisks(String(job.payload.deployment), job.signal), {
    concurrency: DISKS_JOBS_AT_ONCE,
  });

  /**
   * Starts every stopped desktop of a deployment (failures are left on the desktops); a job. A
   * start no host takes because none answered lately (a host's probe may lag while a whole class
   * starts) is tried again, REFUSED_TRIES times in all, REFUSED_RETRY_MS apart: it leaves nothing
   * on the desktop, which would otherwise stay stopped without a word.
   */
  const startDesktops = async (deploymentId: string, signal: AbortSignal) => {
    let pending = (await app.deployments.desktopsOf(deploymentId))
      .filter((d) => inSet(desktopStates.startable, d.row.state))
      .map((d) => d.row.id);
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      const refused: string[] = [];
      for (const id of pending) {
        signal.throwIfAborted();
        await app.engine.start(id).catch((err: unknown) => {
          if (attempt < REFUSED_TRIES && isHostSilence(err)) refused.push(id);
          else app.log.warn({ err, desktop: id }, 'deployment start failed');
        });
      }
      if (refused.length > 0) await sleep(REFUSED_RETRY_MS, undefined, { signal });
      pending = refused;
    }
  };
  app.work.handle(START_JOB, (job) => startDesktops(String(job.payload.deployment), job.signal), {
    concurrency: DISKS_JOBS_AT_ONCE,
  });

  /**
   * After the rows are committed: the users of a visible deployment see their new desktop, the
   * owners see the rows, and the disks are made by a job.
   */
  const announceAndBuild = async (row: DeploymentRow, ids: readonly string[]) => {
    if (row.visible)
      for (const id of ids) await app.desktops.publishCurrent(id, 'desktops.created');
    events.touch(row.id, ids);
    if (ids.length === 0) return;
    creating.add(row.id);
    for (const ownerId of audienceOf(row))
      app.events.publish({
        name: 'deployments.creatingDesktops',
        payload: { deployment_id: row.id },
        ownerId,
      });
    // One job per batch of new desktops (named by its first): a recreate's batch is not dropped
    // as a duplicate of a job still finishing; two jobs never make one disk (its lease).
    await app.work.enqueue(DISKS_JOB, `${DISKS_JOB}:${row.id}:${ids[0]}`, { deployment: row.id });
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
      // Read again under the owner's locks: a recreate of this deployment running at the same
      // time (on this node or another) has added its desktops; none is added twice.
      const now = new Set((await app.deployments.desktopsOf(row.id, tx)).map((d) => d.row.userId));
      const adding = missing.filter((t) => !now.has(t.id));
      if (adding.length === 0) return [];
      await checkDeploymentQuota(query, subject, {
        newDeployment: false,
        desktops: adding.length,
      });
      return insertDesktops(row, template, adding, tx);
    });
    await announceAndBuild(row, ids);
  };

  return {
    announceAndBuild,
    removeDesktops,
    assertIdle,
    assertNotCreating,
    recreateNow,

    /** Starts every stopped desktop (failures are left on the desktops), through a job. */
    async startAll(auth: AuthContext, id: string): Promise<void> {
      const row = await deploymentFor(auth, id);
      const { finished } = await app.work.enqueue(START_JOB, `${START_JOB}:${row.id}`, {
        deployment: row.id,
      });
      await finished;
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
