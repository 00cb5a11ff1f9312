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
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne, or, sql } from 'drizzle-orm';
import {
  desktops,
  templateFromCreate,
  templateFromDuplicate,
  templateFromUpdate,
  templates,
  templateToWire,
  type DesktopRow,
  type TemplateRow,
} from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { HypervisorError } from '../../platform/hypervisor/types.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  canManageItem,
  isAllowed,
  managesOwner,
  type Caller,
} from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { NamedTemplate } from './catalog-repositories.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import {
  stockImageOf,
  prepareCardImage,
  createReferenceCheck,
  assertStateAllows,
} from '../desktops/index.ts';
import type { DirectoryUser } from '../directory/index.ts';
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
import {
  checkDesktopCreate,
  checkTemplateCreate,
  lockQuotaScopes,
  type QuotaSubject,
} from '../quotas/index.ts';

/** What a desktop being read for a template shows on its card. */
export const TEMPLATE_ACTION = 'template';

/** Progress is pushed at most once per this many percent. */
const PROGRESS_STEP = 5;

/** The template list item of a row, as `viewer` sees it. */
export function templateItem(named: NamedTemplate, viewer: Caller): Template {
  const { row } = named;
  return {
    ...templateToWire(row),
    kind: 'template',
    type: 'nonpersistent',
    user_id: row.userId,
    user_name: named.userName,
    category_name: named.categoryName,
    group_name: named.groupName,
    editable: canManageItem(viewer, { ...row, ownerRole: named.ownerRole }),
  };
}

const subjectOf = (who: {
  userId: string;
  groupId: string;
  categoryId: string;
  role: string;
}): QuotaSubject => ({
  userId: who.userId,
  groupId: who.groupId,
  categoryId: who.categoryId,
  role: who.role,
});

const notFound = () => new ApiError('not_found', 'Template not found', 'not_found');

/** A template whose disk is not there yet (or never will be) can not be used. */
function assertReady(template: TemplateRow): void {
  if (template.status === 'creating')
    throw new ApiError(
      'precondition_required',
      'The template is still being created',
      'template_not_ready',
      { id: template.id },
    );
  if (template.status === 'failed')
    throw new ApiError('precondition_required', 'The template has failed', 'template_failed', {
      id: template.id,
    });
}

const SOURCE_GONE = 'The desktop the template is made from is no longer there';

/**
 * Why a copy failed, as the template's owner is told: what went wrong, never a server path or
 * qemu-img's own words (those go to the log).
 */
function failureDetail(err: unknown): string {
  if (err instanceof HypervisorError)
    switch (err.code) {
      case 'disk_not_found':
        return 'The disk of the desktop is missing';
      case 'already_running':
        return 'The disk of the desktop is in use by a running desktop';
      default:
        return 'The disk of the desktop could not be copied';
    }
  return err instanceof Error && err.message === SOURCE_GONE
    ? SOURCE_GONE
    : 'The disk of the template could not be made';
}

/** Moves a file, copying it when source and target are on different file systems. */
async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EXDEV')) throw err;
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}

export interface Derivatives {
  templates: TemplateRow[];
  desktops: DesktopRow[];
}

export type TemplateService = ReturnType<typeof createTemplateService>;

export function createTemplateService(app: FastifyInstance) {
  const { db } = app;
  /** Copies running in this process, by template id (aborted when the server closes). */
  const building = new Map<string, AbortController>();
  const assertUsableReferences = createReferenceCheck(app);

  const diskPathOf = (id: string) => join(app.config.dataDir, 'templates', `${id}.qcow2`);

  const namedOne = async (id: string): Promise<NamedTemplate | undefined> =>
    (await app.templates.named(eq(templates.id, id)))[0];

  /** Pushes a template as it is now to its owner. */
  const publish = async (
    id: string,
    name: 'templates.created' | 'templates.updated',
  ): Promise<Template | undefined> => {
    const named = await namedOne(id);
    if (!named) return undefined;
    const owner: Caller = {
      userId: named.row.userId,
      role: named.ownerRole ?? 'user',
      categoryId: named.row.categoryId,
    };
    const payload = templateItem(named, owner);
    app.events.publish({ name, payload, ownerId: named.row.userId });
    return payload;
  };

  const publishRemoved = (row: TemplateRow) =>
    app.events.publish({
      name: 'templates.deleted',
      payload: { id: row.id, version: row.version + 1 },
      ownerId: row.userId,
    });

  /** The template the caller manages: 404 unknown, 403 somebody else's. */
  const templateFor = async (auth: AuthContext, id: string): Promise<NamedTemplate> => {
    const named = await namedOne(id);
    if (!named) throw notFound();
    if (!canManageItem(auth, { ...named.row, ownerRole: named.ownerRole }))
      throw new ApiError('forbidden', 'Not enough rights on this template', 'forbidden');
    return named;
  };

  const assertNameFree = async (
    userId: string,
    name: string,
    exceptId: string | undefined,
    on: Executor = db,
  ) => {
    const taken = await app.templates.list({
      where: and(
        eq(templates.userId, userId),
        sql`trim(${templates.name}) = ${name.trim()}`,
        exceptId ? ne(templates.id, exceptId) : undefined,
      ),
      on,
    });
    if (taken.length > 0)
      throw new ApiError(
        'conflict',
        'A template with this name already exists',
        'new_template_name_exists',
        { name: name.trim() },
      );
  };

  /** Everything made from a template, recursively (the template itself left out). */
  const derivativesOf = async (root: TemplateRow): Promise<Derivatives> => {
    const seen = new Set([root.id]);
    const found: Derivatives = { templates: [], desktops: [] };
    let frontier = [root.id];
    while (frontier.length > 0) {
      found.desktops.push(
        ...(await app.desktops.table.list({ where: inArray(desktops.templateId, frontier) })),
      );
      const children = (
        await app.templates.list({
          where: or(
            inArray(templates.parentId, frontier),
            inArray(templates.duplicateOf, frontier),
          ),
        })
      ).filter((t) => !seen.has(t.id));
      for (const t of children) seen.add(t.id);
      found.templates.push(...children);
      frontier = children.map((t) => t.id);
    }
    return found;
  };

  /** The owners of some rows, with their names and roles. */
  const ownersOf = async (rows: readonly { userId: string }[]) =>
    new Map<string, DirectoryUser>(
      (await app.directory.usersByIds([...new Set(rows.map((r) => r.userId))])).map((u) => [
        u.id,
        u,
      ]),
    );

  const manages = (
    auth: AuthContext,
    row: { userId: string; categoryId: string },
    owners: Map<string, DirectoryUser>,
  ) => canManageItem(auth, { ...row, ownerRole: owners.get(row.userId)?.role ?? null });

  // ------------------------------------------------------------------ the disk copy

  const writeProgress = async (id: string, percentage: number) => {
    const saved = await app.templates.update(
      id,
      { progress: { percentage } },
      { condition: eq(templates.status, 'creating') },
    );
    if (saved) await publish(id, 'templates.updated');
  };

  /** The desktop a template was read from may be used again. */
  const releaseDesktop = async (desktopId: string | null) => {
    if (!desktopId) return;
    const desktop = await app.desktops.byId(desktopId);
    if (desktop?.state === 'working' && desktop.currentAction === TEMPLATE_ACTION)
      await app.desktops.update(desktopId, { state: 'stopped', currentAction: null }, ['working']);
  };

  /**
   * Copies the source desktop's disk into the template's own, then marks the template ready (or
   * failed with the reason) and gives the desktop back. An abort (the server closing) leaves both
   * as they are for the next start to take up.
   */
  const build = async (id: string, signal: AbortSignal): Promise<void> => {
    const template = await app.templates.get(id);
    if (template?.status !== 'creating') return;
    const target = template.diskPath ?? diskPathOf(id);
    let progress = Promise.resolve();
    try {
      const desktop = template.sourceDesktopId
        ? await app.desktops.byId(template.sourceDesktopId)
        : undefined;
      if (desktop?.state !== 'working' || desktop.currentAction !== TEMPLATE_ACTION)
        throw new Error(SOURCE_GONE);
      const source = desktop.diskPath ?? app.engine.diskPath(desktop.id);
      // A target left by an earlier, interrupted run is made again from the (still locked) source.
      await rm(target, { force: true });
      let pushed = 0;
      const info = await app.hypervisor.convertDisk({
        source,
        target,
        signal,
        onProgress: (percent) => {
          if (percent < 100 && percent - pushed < PROGRESS_STEP) return;
          pushed = percent;
          // a progress write that fails is only a missed update, never a failed copy
          progress = progress
            .then(() => writeProgress(id, Math.floor(percent)))
            .catch((err: unknown) => app.log.warn({ err, template: id }, 'template progress'));
        },
      });
      await progress;
      const ready = await app.templates.update(
        id,
        { status: 'ready', progress: null, detail: null, desktopSize: info.actualSize },
        { condition: eq(templates.status, 'creating') },
      );
      if (ready) await publish(id, 'templates.updated');
      else await rm(target, { force: true });
      app.log.info({ template: id, bytes: info.actualSize }, 'template disk ready');
    } catch (err) {
      await progress;
      if (signal.aborted) return;
      const detail = failureDetail(err);
      app.log.warn({ err, template: id }, 'template disk creation failed');
      await rm(target, { force: true }).catch(() => undefined);
      const failed = await app.templates.update(
        id,
        { status: 'failed', progress: null, detail },
        { condition: eq(templates.status, 'creating') },
      );
      if (failed) await publish(id, 'templates.updated');
    }
    if (!signal.aborted) await releaseDesktop(template.sourceDesktopId);
  };

  const startBuild = (id: string) => {
    if (building.has(id)) return;
    const controller = new AbortController();
    building.set(id, controller);
    app.engine.background(
      build(id, controller.signal).finally(() => building.delete(id)),
      'template disk creation failed',
      id,
    );
  };

  /** A template entry of the recycle bin: the rows as they were, and the disks they own. */
  const recycle = async (
    auth: AuthContext,
    root: TemplateRow,
    found: Derivatives,
  ): Promise<string> => {
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
    const { entry, removedTemplates, removedDesktops } = await db.transaction(async (tx) => {
      const removedDesktops: DesktopRow[] = [];
      for (const d of persistent) {
        const gone = await app.desktops.table.remove(d.id, tx);
        if (gone) removedDesktops.push(gone);
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
            desktops: removedDesktops.map((d) => ({ ...d, runtime: {}, state: 'stopped' })),
            storages: sized,
            agent_name: auth.name,
          },
        },
        tx,
      );
      return { entry, removedTemplates, removedDesktops };
    });
    for (const d of removedDesktops) app.desktops.announceRemoved(d);
    for (const t of removedTemplates) publishRemoved(t);
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
        deployments: 0,
        storages: sized.length,
      },
      ownerId: root.userId,
    });
    app.log.info(
      { template: root.id, entry: entry.id, agent: auth.userId },
      'template moved to the recycle bin',
    );
    return entry.id;
  };

  return {
    publish,
    publishRemoved,
    derivativesOf,

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
        .filter(({ row }) =>
          kind === 'all'
            ? isAllowed(auth, row)
            : row.userId !== auth.userId && isAllowed(auth, row, { listsOnly: true }),
        )
        .map((n) => templateItem(n, auth));
    },

    /** POST /template: a template from a stopped desktop the caller manages; its disk follows. */
    async create(auth: AuthContext, body: TemplateCreate): Promise<{ id: string }> {
      const desktop = await app.desktopService.desktopFor(auth, body.desktop_id);
      if (desktop.server)
        throw new ApiError(
          'precondition_required',
          'A server can not be made into a template',
          'template_from_server',
        );
      assertStateAllows('template', desktop.state);
      const source = desktop.diskPath ?? app.engine.diskPath(desktop.id);
      if (!existsSync(source))
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
        await assertNameFree(auth.userId, name, undefined, tx);
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
            diskPath: diskPathOf(id),
            parentId: desktop.templateId,
            sourceDesktopId: desktop.id,
          },
          tx,
        );
      });
      await app.desktops.publishCurrent(desktop.id, 'desktops.updated');
      await publish(id, 'templates.created');
      startBuild(id);
      app.log.info({ template: id, desktop: desktop.id, agent: auth.userId }, 'template creation');
      return { id };
    },

    /**
     * POST /template/duplicate/{template_id}: a copy of a template the caller may use, sharing its
     * disk, for the caller or (admins, and managers for the users they manage) another user.
     */
    async duplicate(
      auth: AuthContext,
      templateId: string,
      body: TemplateDuplicate,
    ): Promise<{ id: string }> {
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
      if (!isAllowed(auth, source))
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
        if (auth.role !== 'admin' && !managesOwner(auth, target))
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
        await assertNameFree(owner.userId, name, undefined, tx);
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
      await publish(id, 'templates.created');
      return { id };
    },

    /**
     * PUT /template/update: name, description, card, sharing and enabled of a template the caller
     * manages. Disabling deletes the temporary desktops made from it.
     */
    async update(auth: AuthContext, body: TemplateUpdate): Promise<Template> {
      const { row: template } = await templateFor(auth, body.id);
      const name = body.name?.trim();
      if (name !== undefined) await assertNameFree(template.userId, name, template.id);
      const allowed = body.allowed
        ? await app.allowedService.shareLists(auth, body.allowed)
        : undefined;
      await assertUsableReferences(auth, body.image ? { image: body.image } : {}, {
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
      if (template.enabled && body.enabled === false) {
        const temporary = await app.desktops.table.list({
          where: and(eq(desktops.templateId, template.id), eq(desktops.type, 'nonpersistent')),
        });
        for (const d of temporary) await app.desktopService.discard(d);
      }
      await publish(template.id, 'templates.updated');
      const named = await namedOne(template.id);
      if (!named) throw notFound();
      return templateItem(named, auth);
    },

    /** GET /template/tree/{id}: what was made from a template, masked where the caller can't manage it. */
    async tree(auth: AuthContext, id: string): Promise<TemplateTree> {
      const { row: template } = await templateFor(auth, id);
      const found = await derivativesOf(template);
      const owners = await ownersOf([template, ...found.templates, ...found.desktops]);
      let pending = false;
      let crossCategory = false;
      const item = (
        kind: 'template' | 'desktop',
        row: { id: string; name: string; userId: string; categoryId: string },
      ): TemplateTreeItem => {
        if (row.categoryId !== template.categoryId) crossCategory = true;
        if (!manages(auth, row, owners)) {
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
      const { row: template } = await templateFor(auth, id);
      const found = await derivativesOf(template);
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
      const owners = await ownersOf([...found.templates, ...found.desktops]);
      const foreign = [...found.templates, ...found.desktops].filter(
        (row) => !manages(auth, row, owners),
      );
      if (foreign.length > 0)
        throw new ApiError(
          'forbidden',
          'Items made from this template belong to others',
          'template_derivatives_not_owned',
          { count: foreign.length },
        );
      const entryId = await recycle(auth, template, found);
      if ((await app.recycleBinService.cutoffHours()) === 0)
        await app.recycleBinService.purgeById(entryId);
      return template.id;
    },

    /**
     * POST /template/to/desktop: a template without derivatives, not a duplicate, becomes a stopped
     * desktop of its owner with the template's disk. Recycled items made from the template lose
     * their base disk: they are deleted for good, which the caller must confirm.
     */
    async toDesktop(auth: AuthContext, body: TemplateToDesktop): Promise<Desktop> {
      const { row: template } = await templateFor(auth, body.template_id);
      assertReady(template);
      if (template.duplicateOf !== null)
        throw new ApiError(
          'precondition_required',
          'A duplicated template can not become a desktop',
          'template_is_duplicate',
          { id: template.id },
        );
      const found = await derivativesOf(template);
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
      publishRemoved(template);
      const desktop = await app.desktops.publishCurrent(id, 'desktops.created');
      if (!desktop) throw notFound();
      for (const entry of dependent) await app.recycleBinService.purgeById(entry.id);
      app.log.info(
        { template: template.id, desktop: id, agent: auth.userId },
        'template to desktop',
      );
      return desktop;
    },

    /**
     * Settles what a stopped server left behind: templates still `creating` get their copy run
     * again, desktops still held for a template that is no longer being made are given back.
     */
    async reconcile(): Promise<void> {
      const creating = await app.templates.list({ where: eq(templates.status, 'creating') });
      for (const t of creating) startBuild(t.id);
      const held = new Set(creating.map((t) => t.sourceDesktopId));
      for (const d of await app.desktops.inStates(['working']))
        if (d.currentAction === TEMPLATE_ACTION && !held.has(d.id)) await releaseDesktop(d.id);
    },

    /** Stops the copies of this process; their templates stay `creating` for the next start. */
    close(): void {
      for (const controller of building.values()) controller.abort();
    },
  };
}
