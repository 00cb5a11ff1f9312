/**
 * A template becomes a desktop: one without derivatives, not a duplicate, turns into a stopped
 * desktop of its owner with the template's disk.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Desktop, TemplateToDesktop } from '../../../../src/generated/types.ts';
import { checkDesktopCreate, lockQuotaScopes } from '../quotas/index.ts';
import { assertReady, moveFile, notFound, subjectOf } from './template-rules.ts';
import type { TemplateContext } from './template-context.ts';

/**
 * POST /template/to/desktop: a template without derivatives, not a duplicate, becomes a stopped
 * desktop of its owner with the template's disk. Recycled items made from the template lose
 * their base disk: they are deleted for good, which the caller must confirm.
 */
export async function templateToDesktop(
  ctx: TemplateContext,
  auth: AuthContext,
  body: TemplateToDesktop,
): Promise<Desktop> {
  const { app, db } = ctx;
  const { row: template } = await ctx.templateFor(auth, body.template_id);
  assertReady(template);
  if (template.duplicateOf !== null)
    throw new ApiError(
      'precondition_required',
      'A duplicated template can not become a desktop',
      'template_is_duplicate',
      { id: template.id },
    );
  const found = await ctx.derivativesOf(template);
  const count = found.templates.length + found.desktops.length;
  if (count > 0)
    throw new ApiError(
      'precondition_required',
      'The template has derived items',
      'template_has_derivatives',
      { count },
    );
  const dependent = await app.recycleBinService.dependingOn([template.id]);
  if (dependent.length > 0 && body.confirm !== true)
    throw new ApiError(
      'precondition_required',
      'Recycled items made from this template will be deleted: confirm to go on',
      'template_to_desktop_confirm_required',
      { items: dependent.length },
    );
  const owner = await app.users.byId(template.userId);
  if (!owner)
    throw new ApiError('not_found', 'The owner of the template is gone', 'user_not_found');
  const disk = template.diskPath;
  if (!disk || !existsSync(disk))
    throw new ApiError(
      'precondition_required',
      'The template disk is not there',
      'desktop_storage_not_ready',
    );
  const id = randomUUID();
  const target = app.engine.diskPath(id);
  const subject = subjectOf({ ...owner, userId: owner.id });
  await moveFile(disk, target);
  try {
    await db.transaction(async (tx) => {
      const query = queryOn(tx);
      await lockQuotaScopes(query, subject);
      await checkDesktopCreate(query, subject, 'desktops');
      if (await app.desktops.nameTaken(owner.id, body.name, undefined, tx))
        throw new ApiError(
          'conflict',
          'A desktop with this name already exists',
          'new_desktop_name_exists',
          { name: body.name.trim() },
        );
      const gone = await app.templates.remove(template.id, tx);
      if (!gone) throw notFound();
      await app.desktops.table.create(
        {
          id,
          userId: owner.id,
          categoryId: template.categoryId,
          groupId: template.groupId,
          name: body.name.trim(),
          description: template.description,
          type: 'persistent',
          state: 'stopped',
          templateId: null,
          hardware: template.hardware,
          guestProperties: template.guestProperties,
          image: template.image,
          diskPath: target,
        },
        tx,
      );
    });
  } catch (error) {
    await moveFile(target, disk).catch((err: unknown) =>
      app.log.error({ err, template: template.id }, 'template disk could not be put back'),
    );
    throw error;
  }
  ctx.publishRemoved(template);
  const desktop = await app.desktops.publishCurrent(id, 'desktops.created');
  if (!desktop) throw notFound();
  for (const entry of dependent) await app.recycleBinService.purgeById(entry.id);
  app.log.info({ template: template.id, desktop: id, agent: auth.userId }, 'template to desktop');
  return desktop;
}
