/**
 * Deleting a user sends everything they own to the recycle bin in one entry of type `user`,
 * owned by the admin or manager who deleted them: their desktops, their deployments with the
 * deployment desktops, their templates with everything made from them (as a template delete
 * does), and the account itself, so a restore brings the user back with their items. Running
 * desktops are stopped first; temporary desktops made from their templates go for good. The
 * recycle-bin entries the user owned pass to the same admin or manager.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import {
  deployments,
  desktops,
  recycleBin,
  templates,
  type DeploymentRow,
  type DesktopRow,
  type TemplateRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { managesOwner } from '../../platform/lib/ownership.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

export function createUserRecycler(app: FastifyInstance) {
  /** Everything the user's deletion takes along: each row once. */
  const gather = async (user: UserRow) => {
    const templateRows = new Map<string, TemplateRow>();
    const desktopRows = new Map<string, DesktopRow>();
    for (const t of await app.templates.list({ where: eq(templates.userId, user.id) })) {
      if (templateRows.has(t.id)) continue;
      templateRows.set(t.id, t);
      const found = await app.templateService.derivativesOf(t);
      for (const x of found.templates) templateRows.set(x.id, x);
      for (const d of found.desktops) desktopRows.set(d.id, d);
    }
    const deploymentRows = await app.deployments.list({
      where: eq(deployments.userId, user.id),
    });
    for (const p of deploymentRows)
      for (const d of await app.deployments.desktopsOf(p.id)) desktopRows.set(d.row.id, d.row);
    for (const d of await app.desktops.table.list({ where: eq(desktops.userId, user.id) }))
      desktopRows.set(d.id, d);
    return {
      templates: [...templateRows.values()],
      desktops: [...desktopRows.values()],
      deployments: deploymentRows,
    };
  };

  /**
   * Moves the user's items into a new entry of the actor and runs `inside` (the user row's
   * delete and its audit entry) in the same transaction.
   */
  return async (
    actor: Actor,
    user: UserRow,
    inside: (tx: Executor) => Promise<void>,
  ): Promise<void> => {
    const found = await gather(user);
    if (
      found.templates.some((t) => t.status === 'creating') ||
      found.desktops.some((d) => d.state === 'creating' || d.state === 'working')
    )
      throw new ApiError(
        'precondition_required',
        "Some of the user's items are being created",
        'user_items_busy',
        { id: user.id },
      );
    // A manager takes along only what belongs to the users they manage (items made from the
    // user's templates may belong to others).
    if (!hasRoleAtLeast(actor.role, role.admin)) {
      const others = [...found.templates, ...found.desktops, ...found.deployments]
        .map((row) => row.userId)
        .filter((id) => id !== user.id);
      const owners = await app.directory.usersByIds([...new Set(others)]);
      const caller = { userId: actor.id, role: actor.role, categoryId: actor.categoryId };
      if (owners.some((o) => !managesOwner(caller, o)) || owners.length < new Set(others).size)
        throw new ApiError(
          'forbidden',
          "Items made from the user's templates belong to others",
          'template_derivatives_not_owned',
          { count: others.length },
        );
    }
    const persistent = found.desktops.filter((d) => d.type === 'persistent');
    for (const d of found.desktops) {
      await app.engine.destroy(d.id, { deleteDisk: false });
      app.viewers.closeDesktop(d.id);
    }
    // Temporary desktops are not kept: they go for good, with their disks.
    for (const d of found.desktops.filter((d) => d.type !== 'persistent'))
      await app.desktopService.discard(d);
    const storages = await Promise.all(
      [
        ...found.templates.flatMap((t) =>
          // a duplicate shares its original's disk; a failed template never got one
          t.duplicateOf === null && t.status !== 'failed' && t.diskPath
            ? [{ id: t.id, path: t.diskPath }]
            : [],
        ),
        ...persistent.map((d) => ({ id: d.id, path: d.diskPath ?? app.engine.diskPath(d.id) })),
      ].map(async (s) => ({
        id: s.id,
        directory_path: s.path,
        status: 'recycled',
        actual_size: await app.engine.diskUsage(s.path),
      })),
    );
    const size = storages.reduce((sum, s) => sum + s.actual_size, 0);
    const moved = await app.db.transaction(async (tx) => {
      const gone: DesktopRow[] = [];
      for (const d of persistent) {
        const r = await app.desktops.table.remove(d.id, tx);
        if (r) gone.push(r);
      }
      const goneDeployments: DeploymentRow[] = [];
      for (const p of found.deployments) {
        const r = await app.deployments.remove(p.id, tx);
        if (r) goneDeployments.push(r);
      }
      const goneTemplates: TemplateRow[] = [];
      for (const t of found.templates) {
        const r = await app.templates.remove(t.id, tx);
        if (r) goneTemplates.push(r);
      }
      await tx.update(recycleBin).set({ ownerId: actor.id }).where(eq(recycleBin.ownerId, user.id));
      const entry = await app.recycleBin.create(
        {
          id: randomUUID(),
          ownerId: actor.id,
          agentId: actor.id,
          itemType: 'user',
          itemName: user.username,
          status: 'recycled',
          size,
          data: {
            // the account as it was, to recreate it; entry data never goes to clients whole
            user,
            templates: goneTemplates.map((t) => ({ ...t, progress: null })),
            deployments: goneDeployments,
            desktops: gone.map((d) => ({ ...d, runtime: {}, state: 'stopped', queue: null })),
            storages,
            agent_name: actor.name,
          },
        },
        tx,
      );
      await inside(tx);
      return { entry, gone, goneDeployments, goneTemplates };
    });
    for (const d of moved.gone) app.desktops.announceRemoved(d);
    for (const t of moved.goneTemplates) app.templateService.publishRemoved(t);
    app.deploymentService.recycled(moved.goneDeployments);
    app.events.publish({
      name: 'recycle-bins.created',
      payload: {
        id: moved.entry.id,
        item_type: 'user',
        item_name: user.username,
        status: 'recycled',
        size,
        accessed: Math.floor(moved.entry.accessed.getTime() / 1000),
        desktops: moved.gone.length,
        templates: moved.goneTemplates.length,
        deployments: moved.goneDeployments.length,
        storages: storages.length,
      },
      ownerId: actor.id,
    });
    app.log.info(
      { user: user.id, entry: moved.entry.id, agent: actor.id },
      'user sent to the recycle bin',
    );
    if ((await app.recycleBinService.cutoffHours()) === 0)
      await app.recycleBinService.purgeById(moved.entry.id);
  };
}
