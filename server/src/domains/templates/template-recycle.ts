/**
 * A template to the recycle bin with everything made from it: one entry holding the rows as they
 * were (the deployments made from it included, so none is left pointing at a template that is
 * gone) and the disks they own; temporary desktops go for good.
 */
import { randomUUID } from 'node:crypto';
import type { DeploymentRow, DesktopRow, TemplateRow } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { notFound, type Derivatives } from './template-rules.ts';
import type { TemplateContext } from './template-context.ts';

/** A template entry of the recycle bin: the rows as they were, and the disks they own. */
export async function recycleTemplate(
  ctx: TemplateContext,
  auth: AuthContext,
  root: TemplateRow,
  found: Derivatives,
): Promise<string> {
  const { app, db } = ctx;
  const persistent = found.desktops.filter((d) => d.type === 'persistent');
  const temporary = found.desktops.filter((d) => d.type !== 'persistent');
  for (const d of found.desktops) {
    await app.engine.destroy(d.id, { deleteDisk: false });
    app.viewers.vnc.closeDesktop(d.id);
  }
  // Temporary desktops are not kept: they go for good, with their disks.
  for (const d of temporary) await app.desktopService.discard(d);
  const allTemplates = [root, ...found.templates];
  const storages = [
    ...allTemplates.flatMap((t) =>
      // a duplicate shares its original's disk; a failed template never got one
      t.duplicateOf === null && t.status !== 'failed' && t.diskPath
        ? [{ id: t.id, path: t.diskPath }]
        : [],
    ),
    ...persistent.map((d) => ({ id: d.id, path: d.diskPath ?? app.engine.diskPath(d.id) })),
  ];
  const sized = await Promise.all(
    storages.map(async (s) => ({
      id: s.id,
      directory_path: s.path,
      status: 'recycled',
      actual_size: await app.engine.diskUsage(s.path),
    })),
  );
  const size = sized.reduce((sum, s) => sum + s.actual_size, 0);
  // The rows leave and the entry arrives in one transaction: of two deletes at once one claims
  // the template and the other finds it gone.
  const { entry, removedTemplates, removedDesktops, removedDeployments } = await db.transaction(
    async (tx) => {
      const removedDesktops: DesktopRow[] = [];
      for (const d of persistent) {
        const gone = await app.desktops.table.remove(d.id, tx);
        if (gone) removedDesktops.push(gone);
      }
      const removedDeployments: DeploymentRow[] = [];
      for (const d of found.deployments) {
        const gone = await app.deployments.remove(d.id, tx);
        if (gone) removedDeployments.push(gone);
      }
      const removedTemplates: TemplateRow[] = [];
      for (const t of allTemplates) {
        const gone = await app.templates.remove(t.id, tx);
        if (gone) removedTemplates.push(gone);
        else if (t.id === root.id) throw notFound();
      }
      const entry = await app.recycleBin.create(
        {
          id: randomUUID(),
          ownerId: root.userId,
          agentId: auth.userId,
          itemType: 'template',
          itemName: root.name,
          status: 'recycled',
          size,
          data: {
            templates: removedTemplates.map((t) => ({ ...t, progress: null })),
            deployments: removedDeployments,
            desktops: removedDesktops.map((d) => ({ ...d, runtime: {}, state: 'stopped' })),
            storages: sized,
            agent_name: auth.name,
          },
        },
        tx,
      );
      return { entry, removedTemplates, removedDesktops, removedDeployments };
    },
  );
  for (const d of removedDesktops) app.desktops.announceRemoved(d);
  app.deploymentService.recycled(removedDeployments);
  for (const t of removedTemplates) ctx.publishRemoved(t);
  app.events.publish({
    name: 'recycle-bins.created',
    payload: {
      id: entry.id,
      item_type: 'template',
      item_name: root.name,
      status: 'recycled',
      size,
      accessed: Math.floor(entry.accessed.getTime() / 1000),
      desktops: removedDesktops.length,
      templates: removedTemplates.length,
      deployments: removedDeployments.length,
      storages: sized.length,
    },
    ownerId: root.userId,
  });
  app.log.info(
    { template: root.id, entry: entry.id, agent: auth.userId },
    'template moved to the recycle bin',
  );
  return entry.id;
}
