/**
 * Templates: made from a stopped desktop, duplicated, listed, edited and shared, enabled and
 * disabled, deleted to the recycle bin with what was made from them, and turned back into a desktop.
 *
 * Disks. A template has its own standalone qcow2 (`DATA_DIR/templates/<id>.qcow2`): the desktop's
 * whole disk chain flattened by the hypervisor, so the template does not depend on the desktop, and
 * the desktop goes on with its own disk. Desktops made from the template are overlays on it. A
 * duplicate shares the disk of the template it copies (it is a second entry for the same disk).
 *
 * Making the disk takes long, so it never runs inside a request: the template is stored `creating`
 * and its desktop `working` (nothing may start, edit or delete it while its disk is read), the
 * request answers, and the copy runs in the background, pushing its progress; then the template is
 * `ready` (or `failed` with the reason) and the desktop `stopped` again. A server that stops in the
 * middle takes the copy up again when it starts (reconcile), so nothing stays in a transitional
 * state.
 *
 * Who may do what: the templates calls are for admins, managers and advanced users. A template is
 * managed (edited, shared, deleted, converted, its tree read) by an admin, its owner, or a manager
 * of its owner's category whose owner is not an admin; it is used (a desktop made from it,
 * duplicated) by whoever its sharing lists admit. A template is made from a desktop the caller
 * manages, and belongs to the caller.
 *
 * Derivatives: the desktops made from a template, the templates made from those desktops and its
 * duplicates, and theirs in turn. A template is deleted with all of them, in one recycle-bin entry,
 * and only by somebody who manages every one of them; a template with derivatives, or a duplicate,
 * can not become a desktop.
 *
 * Quota: every template a user owns counts, enabled or not, except failed ones (they hold no disk);
 * a create or a duplicate is checked against the owner's quota and the group and category limits
 * under the same locks as desktop creates, so the last unit admits exactly one.
 */
import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { desktops, templateFromUpdate, templates } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { isAllowed } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { prepareCardImage, releaseCardImages } from '../desktops/index.ts';
import type {
  Desktop,
  Template,
  TemplateCreate,
  TemplateDuplicate,
  TemplateToDesktop,
  TemplateTree,
  TemplateTreeItem,
  TemplateUpdate,
} from '../../../../src/generated/types.ts';
import { checkTemplateCreate } from '../quotas/index.ts';
import { notFound, subjectOf, TEMPLATE_ACTION, templateItem } from './template-rules.ts';
import { createTemplateBuilder } from './template-build.ts';
import { createTemplateContext } from './template-context.ts';
import { createTemplate, duplicateTemplate } from './template-create.ts';
import { recycleTemplate } from './template-recycle.ts';
import { templateToDesktop } from './template-to-desktop.ts';

export { TEMPLATE_ACTION, templateItem, type Derivatives } from './template-rules.ts';

export type TemplateService = ReturnType<typeof createTemplateService>;

export function createTemplateService(app: FastifyInstance) {
  const ctx = createTemplateContext(app);
  const builder = createTemplateBuilder(ctx);

  return {
    publish: ctx.publish,
    publishRemoved: ctx.publishRemoved,
    derivativesOf: ctx.derivativesOf,

    /** GET /templates/new/check_quota: the caller may make one more template. */
    async checkQuota(auth: AuthContext): Promise<void> {
      await checkTemplateCreate(app.database.query, subjectOf(auth));
    },

    /** GET /user/templates: the caller's own templates, any state. */
    async list(auth: AuthContext): Promise<Template[]> {
      return (await app.templates.named(eq(templates.userId, auth.userId))).map((n) =>
        templateItem(n, auth),
      );
    },

    /**
     * GET /user/templates/allowed/{kind}: the enabled, ready templates the caller may use (`all`),
     * or those somebody else shared with the caller (`shared`).
     */
    async usable(auth: AuthContext, kind: 'all' | 'shared'): Promise<Template[]> {
      const rows = await app.templates.named(
        and(eq(templates.enabled, true), eq(templates.status, 'ready')),
      );
      return rows
        .filter(({ row, ownerRole }) =>
          kind === 'all'
            ? isAllowed(auth, { ...row, ownerRole })
            : row.userId !== auth.userId &&
              isAllowed(auth, { ...row, ownerRole }, { listsOnly: true }),
        )
        .map((n) => templateItem(n, auth));
    },

    /** POST /template: a template from a stopped desktop the caller manages; its disk follows. */
    create(auth: AuthContext, body: TemplateCreate): Promise<{ id: string }> {
      return createTemplate(ctx, builder, auth, body);
    },

    /**
     * POST /template/duplicate/{template_id}: a copy of a template the caller may use, sharing its
     * disk, for the caller or (admins, and managers for the users they manage) another user.
     */
    duplicate(
      auth: AuthContext,
      templateId: string,
      body: TemplateDuplicate,
    ): Promise<{ id: string }> {
      return duplicateTemplate(ctx, auth, templateId, body);
    },

    /**
     * PUT /template/update: name, description, card, sharing and enabled of a template the caller
     * manages. Disabling deletes the temporary desktops made from it.
     */
    async update(auth: AuthContext, body: TemplateUpdate): Promise<Template> {
      const { row: template } = await ctx.templateFor(auth, body.id);
      const name = body.name?.trim();
      if (name !== undefined) await ctx.assertNameFree(template.userId, name, template.id);
      const allowed = body.allowed
        ? await app.allowedService.shareLists(auth, body.allowed)
        : undefined;
      await ctx.assertUsableReferences(auth, body.image ? { image: body.image } : {}, {
        id: template.id,
        hardware: template.hardware,
        image: template.image,
      });
      const card =
        body.image?.type === 'user' && body.image.file
          ? await prepareCardImage(app.config.dataDir, body.image.file.data)
          : undefined;
      const image =
        card?.image ??
        (body.image?.type === 'stock' && body.image.id
          ? { type: 'stock' as const, id: body.image.id, url: '' }
          : undefined);
      await card?.write();
      const saved = await app.templates
        .update(template.id, {
          ...templateFromUpdate(body),
          ...(name !== undefined ? { name } : {}),
          ...(allowed ? { allowed } : {}),
          ...(image ? { image } : {}),
        })
        .catch(async (error: unknown) => {
          await card?.remove();
          throw error;
        });
      if (!saved) {
        await card?.remove();
        throw notFound();
      }
      // The card it had before, unless something made from it still shows it.
      if (image) await releaseCardImages(app.config.dataDir, app.database.query, [template.image]);
      if (template.enabled && body.enabled === false) {
        const temporary = await app.desktops.table.list({
          where: and(eq(desktops.templateId, template.id), eq(desktops.type, 'nonpersistent')),
        });
        for (const d of temporary) await app.desktopService.discard(d);
      }
      await ctx.publish(template.id, 'templates.updated');
      const named = await ctx.namedOne(template.id);
      if (!named) throw notFound();
      return templateItem(named, auth);
    },

    /** GET /template/tree/{id}: what was made from a template, masked where the caller can't manage it. */
    async tree(auth: AuthContext, id: string): Promise<TemplateTree> {
      const { row: template } = await ctx.templateFor(auth, id);
      const found = await ctx.derivativesOf(template);
      const owners = await ctx.ownersOf([template, ...found.templates, ...found.desktops]);
      let pending = false;
      let crossCategory = false;
      const item = (
        kind: 'template' | 'desktop',
        row: { id: string; name: string; userId: string; categoryId: string },
      ): TemplateTreeItem => {
        if (row.categoryId !== template.categoryId) crossCategory = true;
        if (!ctx.manages(auth, row, owners)) {
          pending = true;
          return {};
        }
        const owner = owners.get(row.userId);
        return {
          id: row.id,
          kind,
          name: row.name,
          user: owner?.username ?? '[Deleted]',
          role: owner?.role ?? '',
          category: owner?.categoryName ?? '[Deleted]',
          group: owner?.groupName ?? '[Deleted]',
        };
      };
      const domains = [
        item('template', template),
        ...found.templates.map((t) => item('template', t)),
        ...found.desktops.map((d) => item('desktop', d)),
      ];
      return {
        domains,
        deployments: [],
        pending,
        cross_category: crossCategory,
        is_duplicated: template.duplicateOf !== null,
      };
    },

    /**
     * DELETE /template/{id}: the template and everything made from it to the recycle bin (for good
     * at once when the retention is "immediate"); answers the template id.
     */
    async delete(auth: AuthContext, id: string): Promise<string> {
      const { row: template } = await ctx.templateFor(auth, id);
      const found = await ctx.derivativesOf(template);
      if (
        [template, ...found.templates].some((t) => t.status === 'creating') ||
        found.desktops.some((d) => d.state === 'creating' || d.state === 'working')
      )
        throw new ApiError(
          'precondition_required',
          'The template or items made from it are being created',
          'template_derivatives_busy',
          { id },
        );
      const made = [...found.templates, ...found.desktops, ...found.deployments];
      const owners = await ctx.ownersOf(made);
      // The desktops of a deployment go with their deployment: whoever may delete it may them.
      const deploymentsManaged = new Set(
        found.deployments.filter((d) => ctx.manages(auth, d, owners)).map((d) => d.id),
      );
      const foreign = [
        ...found.templates,
        ...found.desktops.filter((d) => !(d.tag && deploymentsManaged.has(d.tag))),
        ...found.deployments,
      ].filter((row) => !ctx.manages(auth, row, owners));
      if (foreign.length > 0)
        throw new ApiError(
          'forbidden',
          'Items made from this template belong to others',
          'template_derivatives_not_owned',
          { count: foreign.length },
        );
      const entryId = await recycleTemplate(ctx, auth, template, found);
      if ((await app.recycleBinService.cutoffHours()) === 0)
        await app.recycleBinService.purgeById(entryId);
      return template.id;
    },

    /**
     * POST /template/to/desktop: a template without derivatives, not a duplicate, becomes a stopped
     * desktop of its owner with the template's disk. Recycled items made from the template lose
     * their base disk: they are deleted for good, which the caller must confirm.
     */
    toDesktop(auth: AuthContext, body: TemplateToDesktop): Promise<Desktop> {
      return templateToDesktop(ctx, auth, body);
    },

    /**
     * Settles what a stopped server left behind: templates still `creating` get their copy run
     * again, desktops still held for a template that is no longer being made are given back.
     */
    async reconcile(): Promise<void> {
      const creating = await app.templates.list({ where: eq(templates.status, 'creating') });
      for (const t of creating) builder.startBuild(t.id);
      const held = new Set(creating.map((t) => t.sourceDesktopId));
      for (const d of await app.desktops.inStates(['working']))
        if (d.currentAction === TEMPLATE_ACTION && !held.has(d.id))
          await builder.releaseDesktop(d.id);
    },
    /** Stops the copies of this process; their templates stay `creating` for the next start. */
    close(): void {
      builder.close();
    },
  };
}
