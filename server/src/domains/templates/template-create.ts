/**
 * New templates: one made from a stopped desktop (its disk copied in the background), and a
 * duplicate sharing the disk of a template, both checked against the owner's quota.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { desktops, templateFromCreate, templateFromDuplicate } from '../../platform/db/schema.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import { queryOn } from '../../platform/db/query.ts';
import { volumeHostOf } from '../../platform/hypervisor/host-volumes.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { isAllowed, managesOwner } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { stockImageOf, assertStateAllows } from '../desktops/index.ts';
import type { TemplateCreate, TemplateDuplicate } from '../../../../src/generated/types.ts';
import { checkTemplateCreate, lockQuotaScopes } from '../quotas/index.ts';
import { assertReady, notFound, subjectOf, TEMPLATE_ACTION } from './template-rules.ts';
import type { TemplateContext } from './template-context.ts';
import type { TemplateBuilder } from './template-build.ts';

/** POST /template: a template from a stopped desktop the caller manages; its disk follows. */
export async function createTemplate(
  ctx: TemplateContext,
  builder: TemplateBuilder,
  auth: AuthContext,
  body: TemplateCreate,
): Promise<{ id: string }> {
  const { app, db } = ctx;
  const desktop = await app.desktopService.desktopFor(auth, body.desktop_id);
  if (desktop.server)
    throw new ApiError(
      'precondition_required',
      'A server can not be made into a template',
      'template_from_server',
    );
  assertStateAllows('template', desktop.state);
  const source = desktop.diskPath ?? app.engine.diskPath(desktop.id);
  // A disk kept on a libvirt host is asked of its pool (the host must answer for the copy).
  const present =
    volumeHostOf(app.config.dataDir, source) === null
      ? existsSync(source)
      : await app.hypervisor.diskInfo(source).then(
          () => true,
          () => false,
        );
  if (!present)
    throw new ApiError(
      'precondition_required',
      'Desktop storage is not ready',
      'desktop_storage_not_ready',
    );
  const allowed = await app.allowedService.shareLists(auth, body.allowed ?? {});
  const id = randomUUID();
  const name = body.name.trim();
  await db.transaction(async (tx) => {
    const query = queryOn(tx);
    await lockQuotaScopes(query, subjectOf(auth));
    await checkTemplateCreate(query, subjectOf(auth));
    await ctx.assertNameFree(auth.userId, name, undefined, tx);
    // The desktop is claimed while stopped: nothing starts, edits or deletes it during the copy.
    const claimed = await app.desktops.table.update(
      desktop.id,
      { state: 'working', currentAction: TEMPLATE_ACTION },
      { condition: eq(desktops.state, 'stopped'), on: tx },
    );
    if (!claimed)
      throw new ApiError(
        'precondition_required',
        'The desktop changed state',
        'desktop_not_stopped',
      );
    await app.templates.create(
      {
        ...templateFromCreate(body),
        id,
        name,
        userId: auth.userId,
        categoryId: auth.categoryId,
        groupId: auth.groupId,
        status: 'creating',
        progress: { percentage: 0 },
        enabled: body.enabled ?? false,
        allowed,
        hardware: desktop.hardware,
        guestProperties: desktop.guestProperties,
        image: Object.keys(desktop.image).length > 0 ? desktop.image : stockImageOf(id),
        diskPath: ctx.diskPathOf(id),
        parentId: desktop.templateId,
        sourceDesktopId: desktop.id,
      },
      tx,
    );
  });
  await app.desktops.publishCurrent(desktop.id, 'desktops.updated');
  await ctx.publish(id, 'templates.created');
  builder.startBuild(id);
  app.log.info({ template: id, desktop: desktop.id, agent: auth.userId }, 'template creation');
  return { id };
}

/**
 * POST /template/duplicate/{template_id}: a copy of a template the caller may use, sharing its
 * disk, for the caller or (admins, and managers for the users they manage) another user.
 */
export async function duplicateTemplate(
  ctx: TemplateContext,
  auth: AuthContext,
  templateId: string,
  body: TemplateDuplicate,
): Promise<{ id: string }> {
  const { app, db } = ctx;
  if (body.template_id !== templateId)
    throw new ApiError(
      'bad_request',
      'The body names another template than the path',
      'bad_request',
      { template_id: body.template_id },
      { errors: { '/template_id': 'bad_request' } },
    );
  const source = await app.templates.get(templateId);
  if (!source) throw notFound();
  const sourceOwner = await app.users.byId(source.userId);
  if (!isAllowed(auth, { ...source, ownerRole: sourceOwner?.role ?? null }))
    throw new ApiError('forbidden', 'Template not allowed', 'template_not_allowed', {
      id: templateId,
    });
  assertReady(source);
  let owner = subjectOf(auth);
  if (body.user_id !== undefined && body.user_id !== auth.userId) {
    const target = await app.users.byId(body.user_id);
    if (!target)
      throw new ApiError(
        'not_found',
        'User not found',
        'not_found',
        { id: body.user_id },
        { errors: { '/user_id': 'not_found' } },
      );
    if (!hasRoleAtLeast(auth.role, role.admin) && !managesOwner(auth, target))
      throw new ApiError(
        'forbidden',
        'You can not make templates for this user',
        'forbidden',
        { id: body.user_id },
        { errors: { '/user_id': 'forbidden' } },
      );
    owner = subjectOf({ ...target, userId: target.id });
  }
  const allowed = await app.allowedService.shareLists(auth, body.allowed ?? {});
  const id = randomUUID();
  const name = body.name.trim();
  await db.transaction(async (tx) => {
    const query = queryOn(tx);
    await lockQuotaScopes(query, owner);
    await checkTemplateCreate(query, owner);
    await ctx.assertNameFree(owner.userId, name, undefined, tx);
    await app.templates.create(
      {
        ...templateFromDuplicate(body),
        id,
        name,
        description: body.description ?? source.description,
        userId: owner.userId,
        categoryId: owner.categoryId,
        groupId: owner.groupId,
        status: 'ready',
        enabled: body.enabled ?? false,
        allowed,
        hardware: source.hardware,
        guestProperties: source.guestProperties,
        image: source.image,
        diskPath: source.diskPath,
        desktopSize: source.desktopSize,
        parentId: source.parentId,
        duplicateOf: source.duplicateOf ?? source.id,
      },
      tx,
    );
  });
  await ctx.publish(id, 'templates.created');
  return { id };
}
