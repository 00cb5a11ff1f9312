/**
 * Deployments: one desktop per target user (the members of the chosen groups and the chosen
 * users, active ones, within the owner's category unless an admin made it, plus the owner when
 * `owner_desktop`), all made from one template with the same hardware.
 *
 * - Create stores the deployment and its desktops (`creating`) in one transaction inside the
 *   owner's deployment quotas, answers, and makes the disks in the background (a few at a time);
 *   the `creatingDesktops` counter of `deployments_update` follows them down to 0. Desktops left
 *   `creating` by a restart are finished by the engine's reconciler.
 * - Recreate adds the desktops of target users who have none (users added to the groups since)
 *   and deletes for good those of users who are no longer targets; it is refused while desktops
 *   are being created.
 * - An invisible deployment's desktops are not in their users' lists (their sockets get a delete
 *   when it is hidden and one add when it is shown again) and their users can not act on them.
 * - Deleting needs every desktop stopped; the deployment and its desktops go to the recycle bin as
 *   one entry with their disks, or for good.
 * Who may do what: deployment-access.ts.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import {
  deploymentFromCreate,
  deployments,
  users,
  type DeploymentInsert,
  type DeploymentRow,
  type DesktopInsert,
  type DesktopRow,
  type TemplateRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Caller } from '../../platform/auth/auth-context.ts';
import {
  stockImageOf,
  toWire,
  prepareCardImage,
  createReferenceCheck,
  checkViewers,
  NEW_DESKTOP_HARDWARE,
} from '../desktops/index.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import { fields } from '../../../../src/generated/fields.ts';
import type {
  AllowedExpanded,
  AllowedShareLists,
  Deployment,
  DeploymentCoOwners,
  DeploymentCreate,
  DeploymentCreateDict,
  DeploymentDesktop,
  DeploymentDetail,
  DeploymentInfo,
  DeploymentPerson,
  DeploymentUpdate,
  DeploymentUserPermissions,
  DesktopHardware,
  ImageUpload,
} from '../../../../src/generated/types.ts';
import {
  lockQuotaScopes,
  RUNNING_STATES,
  type QuotaSubject,
  checkDeploymentQuota,
} from '../quotas/index.ts';
import {
  assertDeploymentRight,
  audienceOf,
  canActOnDeployment,
  type DeploymentRight,
} from './deployment-access.ts';
import { createDeploymentEvents } from './deployment-events.ts';
import { csvFile, csvFileName } from '../../platform/lib/csv-file.ts';

/** The booking fields of a deployment's answers. */
export interface DeploymentBookingState {
  needs_booking: boolean;
  booking_id: string | false;
  next_booking_start: string | null;
  next_booking_end: string | null;
}

/** Disks made at once while a deployment is created. */
const CREATE_CONCURRENCY = 4;
/** Longest desktop name. */
const MAX_NAME = Number(
  fields.DeploymentCreate.find((f) => f.path === 'desktop_name')?.maxLength ?? 50,
);
/** States a deployment desktop may be in while the deployment is edited or deleted. */
const IDLE_STATES: readonly DesktopRow['state'][] = ['stopped', 'failed'];
const RUNNING: readonly string[] = RUNNING_STATES;

interface TargetUser {
  id: string;
  categoryId: string;
  groupId: string;
}

const subjectOf = (c: { userId: string; groupId: string; categoryId: string; role: string }) => ({
  userId: c.userId,
  groupId: c.groupId,
  categoryId: c.categoryId,
  role: c.role,
});

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : 0);

export type DeploymentService = ReturnType<typeof createDeploymentService>;

export function createDeploymentService(app: FastifyInstance) {
  const { db } = app;
  const assertUsableReferences = createReferenceCheck(app);
  /** Deployments whose desktops this process is creating now. */
  const creating = new Set<string>();

  const ownedDeployment = async (id: string) => {
    const row = await app.deployments.get(id);
    if (!row) return undefined;
    const owner = await app.users.byId(row.userId);
    return { row, ownerRole: owner?.role ?? null };
  };

  const deploymentFor = async (
    auth: Caller,
    id: string,
    right: DeploymentRight = 'manage',
  ): Promise<DeploymentRow> => assertDeploymentRight(auth, await ownedDeployment(id), right);

  const templateName = async (templateId: string | null): Promise<string | false> =>
    templateId ? ((await app.templates.get(templateId))?.name ?? false) : false;

  const listItem = async (row: DeploymentRow): Promise<Deployment> => {
    const counts = (await app.deployments.counts([row.id])).get(row.id);
    const booking = (await app.bookingService.deploymentBookings([row])).get(row.id);
    return itemOf(row, counts, await templateName(row.templateId), booking);
  };

  const itemOf = (
    row: DeploymentRow,
    counts: Awaited<ReturnType<typeof app.deployments.counts>> extends Map<string, infer C>
      ? C | undefined
      : never,
    template: string | false,
    booking: DeploymentBookingState | undefined,
  ): Deployment => ({
    id: row.id,
    name: row.name,
    description: row.description,
    desktop_name: row.desktopName,
    visible: row.visible,
    tag: row.id,
    tag_name: row.name,
    tag_visible: row.visible,
    template,
    allowed: row.allowed,
    user: row.userId,
    co_owners: row.coOwners,
    user_permissions: row.userPermissions,
    needs_booking: booking?.needs_booking ?? false,
    next_booking_start: booking?.next_booking_start ?? null,
    next_booking_end: booking?.next_booking_end ?? null,
    booking_id: booking?.booking_id ?? false,
    totalDesktops: counts?.totalDesktops ?? 0,
    visibleDesktops: counts?.visibleDesktops ?? 0,
    startedDesktops: counts?.startedDesktops ?? 0,
    creatingDesktops: counts?.creatingDesktops ?? 0,
    version: row.version,
  });

  const desktopItemOf = (
    d: Awaited<ReturnType<typeof app.deployments.desktopsOf>>[number],
  ): DeploymentDesktop => {
    const wire = toWire(d.row);
    return {
      id: d.row.id,
      name: d.row.name,
      description: d.row.description,
      user: d.row.userId,
      user_name: d.userName,
      user_photo: d.userPhoto,
      group: d.row.groupId,
      group_name: d.groupName,
      category: d.row.categoryId,
      category_name: d.categoryName,
      state: d.row.state,
      viewers: configuredViewers(d.row.guestProperties.viewers),
      accessed: epoch(d.row.accessed),
      ip: wire.ip ?? null,
      viewer: false,
      image: wire.image,
      needs_booking: wire.needs_booking ?? false,
      booking_id: wire.booking_id ?? false,
      visible: d.row.visible,
      tag: d.row.tag ?? '',
      type: d.row.type,
      template: d.row.templateId,
      editable: true,
      server: d.row.server,
      current_action: d.row.currentAction,
      scheduled: { shutdown: false },
      version: d.row.version,
    };
  };

  const desktopItem = async (desktopId: string): Promise<DeploymentDesktop | undefined> => {
    const row = await app.desktops.table.get(desktopId);
    if (!row?.tag) return undefined;
    const named = (await app.deployments.desktopsOf(row.tag)).find((d) => d.row.id === desktopId);
    return named ? desktopItemOf(named) : undefined;
  };

  const events = createDeploymentEvents(app, { listItem, desktopItem });

  const publishToAudience = (
    row: DeploymentRow,
    name: 'deployments.created' | 'deployments.updated',
    payload: Deployment,
    audience = audienceOf(row),
  ) => {
    for (const ownerId of audience) app.events.publish({ name, payload, ownerId });
  };

  /** The users who get a desktop: active members of the groups, the users, and the owner if asked. */
  const targetUsers = async (
    row: Pick<DeploymentRow, 'allowed' | 'userId' | 'categoryId' | 'createDict'>,
    ownerRole: string | null,
    on: Executor = db,
  ): Promise<TargetUser[]> => {
    const groupIds = row.allowed.groups || [];
    const userIds = row.allowed.users || [];
    const picked: SQL[] = [];
    if (groupIds.length > 0) picked.push(inArray(users.groupId, groupIds));
    if (userIds.length > 0) picked.push(inArray(users.id, userIds));
    if (row.createDict.owner_desktop !== false) picked.push(eq(users.id, row.userId));
    if (picked.length === 0) return [];
    return on
      .select({ id: users.id, categoryId: users.categoryId, groupId: users.groupId })
      .from(users)
      .where(
        and(
          eq(users.active, true),
          or(...picked),
          // Deployments of non-admins reach only their owner's category.
          ownerRole === 'admin' ? undefined : eq(users.categoryId, row.categoryId),
        ),
      )
      .orderBy(users.id);
  };

  /** A name the user has no other desktop by: the desktop name, then with the deployment's name. */
  const freeName = async (userId: string, base: string, deploymentName: string, on: Executor) => {
    for (let n = 0; n < 20; n++) {
      const suffix = n === 0 ? '' : n === 1 ? ` (${deploymentName})` : ` (${deploymentName} ${n})`;
      const candidate = `${base.slice(0, Math.max(1, MAX_NAME - suffix.length))}${suffix}`.slice(
        0,
        MAX_NAME,
      );
      if (!(await app.desktops.nameTaken(userId, candidate, undefined, on))) return candidate;
    }
    return `${base.slice(0, MAX_NAME - 9)} ${randomUUID().slice(0, 8)}`;
  };

  /** Inserts the rows (state `creating`) of the desktops of these users, inside the caller's transaction. */
  const insertDesktops = async (
    row: DeploymentRow,
    template: TemplateRow,
    targets: readonly TargetUser[],
    on: Executor,
  ): Promise<string[]> => {
    const dict = row.createDict;
    const ids: string[] = [];
    for (const user of targets) {
      const id = randomUUID();
      const values: DesktopInsert = {
        id,
        userId: user.id,
        categoryId: user.categoryId,
        groupId: user.groupId,
        name: await freeName(user.id, row.desktopName, row.name, on),
        description: dict.description ?? template.description,
        type: 'persistent',
        state: 'creating',
        templateId: template.id,
        hardware: { ...NEW_DESKTOP_HARDWARE, ...template.hardware, ...(dict.hardware ?? {}) },
        guestProperties: dict.guest_properties ?? template.guestProperties,
        image: dict.image && Object.keys(dict.image).length > 0 ? dict.image : stockImageOf(id),
        tag: row.id,
        visible: row.visible,
      };
      await app.desktops.table.create(values, on);
      ids.push(id);
    }
    return ids;
  };

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

  const assertNameFree = async (ownerId: string, name: string, exceptId?: string) => {
    const taken = await app.deployments.list({
      where: and(
        eq(deployments.userId, ownerId),
        sql`trim(${deployments.name}) = ${name.trim()}`,
        exceptId ? ne(deployments.id, exceptId) : undefined,
      ),
    });
    if (taken.length > 0)
      throw new ApiError(
        'conflict',
        'A deployment with this name already exists',
        'duplicated_name',
        {
          name: name.trim(),
        },
      );
  };

  const cardImageOf = async (image: ImageUpload | undefined) => {
    if (!image) return undefined;
    if (image.type === 'user' && image.file) {
      const card = await prepareCardImage(app.config.dataDir, image.file.data);
      return { image: card.image, card };
    }
    if (image.type === 'stock' && image.id)
      return { image: { type: 'stock' as const, id: image.id, url: '' }, card: undefined };
    return undefined;
  };

  const ownerSubject = async (row: DeploymentRow): Promise<QuotaSubject> => {
    const owner = await app.users.byId(row.userId);
    if (!owner) throw new ApiError('not_found', 'The owner no longer exists', 'user_not_found');
    return subjectOf({ ...owner, userId: owner.id });
  };

  const person = (u: {
    id: string;
    name: string;
    uid: string;
    groupName: string | null;
    categoryName: string | null;
  }): DeploymentPerson => ({
    id: u.id,
    name: u.name,
    uid: u.uid,
    group_name: u.groupName,
    category_name: u.categoryName,
  });

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

  /** True when the caller manages the deployment this desktop belongs to. */
  const managesDeploymentOf = async (auth: Caller, desktop: DesktopRow): Promise<boolean> => {
    if (!desktop.tag) return false;
    const deployment = await ownedDeployment(desktop.tag);
    return deployment ? canActOnDeployment(auth, deployment, 'manage') : false;
  };

  /** True unless the desktop is hidden or its deployment is invisible. */
  const isVisible = async (desktop: DesktopRow): Promise<boolean> => {
    if (!desktop.tag) return true;
    if (!desktop.visible) return false;
    const deployment = await app.deployments.get(desktop.tag);
    return deployment?.visible ?? false;
  };

  return {
    events,
    desktopItem,

    async init() {
      await events.init();
    },
    close: () => events.close(),

    managesDeploymentOf,
    isVisible,

    /**
     * The rule for the desktop calls: the user of a desktop of an invisible deployment (or a hidden
     * desktop) can not act on it; those who manage the deployment can, and so can whoever manages
     * the desktop itself otherwise (admins, managers of its category).
     */
    async assertDesktopUsable(auth: Caller, desktop: DesktopRow) {
      if (!desktop.tag) return;
      if (auth.role === 'admin') return;
      if (await managesDeploymentOf(auth, desktop)) return;
      if (desktop.userId === auth.userId && !(await isVisible(desktop)))
        throw new ApiError(
          'forbidden',
          'The desktop is not visible now',
          'desktop_is_not_visible',
          { id: desktop.id },
        );
    },

    /** A role `user` recreates the disk of a deployment desktop only with the `recreate` permission. */
    async assertUserMay(auth: Caller, desktop: DesktopRow, action: 'recreate') {
      if (!desktop.tag || auth.role !== 'user') return;
      const deployment = await app.deployments.get(desktop.tag);
      if (!deployment?.userPermissions.includes(action))
        throw new ApiError('forbidden', `Not allowed to ${action} this desktop`, 'forbidden', {
          action,
        });
    },

    /** GET /deployments: owned and co-owned, by name descending. */
    async list(auth: AuthContext): Promise<Deployment[]> {
      const rows = await app.deployments.ownedOrCoOwnedBy(auth.userId);
      const counts = await app.deployments.counts(rows.map((r) => r.id));
      const templateIds = [...new Set(rows.flatMap((r) => (r.templateId ? [r.templateId] : [])))];
      const names = new Map((await app.templates.byIds(templateIds)).map((t) => [t.id, t.name]));
      const booked = await app.bookingService.deploymentBookings(rows);
      return rows
        .map((r) =>
          itemOf(
            r,
            counts.get(r.id),
            r.templateId ? (names.get(r.templateId) ?? false) : false,
            booked.get(r.id),
          ),
        )
        .sort((a, b) => b.name.localeCompare(a.name) || b.id.localeCompare(a.id));
    },

    async create(auth: AuthContext, body: DeploymentCreate): Promise<{ id: string }> {
      const template = await assertUsableReferences(auth, {
        template_id: body.template_id,
        ...(body.hardware ? { hardware: body.hardware } : {}),
        ...(body.image ? { image: body.image } : {}),
      });
      if (!template) throw new ApiError('not_found', 'Template not found', 'not_found');
      const allowed = await app.allowedService.shareLists(auth, body.allowed as AllowedShareLists);
      const guestProperties = body.guest_properties ?? template.guestProperties;
      const hardware: DesktopHardware = {
        ...NEW_DESKTOP_HARDWARE,
        ...template.hardware,
        ...(body.hardware ?? {}),
      };
      checkViewers({
        viewers: guestProperties.viewers,
        interfaces: hardware.interfaces,
        videos: hardware.videos,
      });
      await assertNameFree(auth.userId, body.name);
      const sent = await cardImageOf(body.image);
      const id = randomUUID();
      const createDict: DeploymentCreateDict = {
        description: body.description ?? null,
        hardware: body.hardware ?? {},
        guest_properties: guestProperties,
        ...(sent ? { image: sent.image } : {}),
        owner_desktop: body.owner_desktop !== false,
      };
      const values: DeploymentInsert = {
        ...deploymentFromCreate(body),
        id,
        name: body.name.trim(),
        desktopName: body.desktop_name.trim(),
        description: body.description ?? null,
        visible: body.visible ?? false,
        userId: auth.userId,
        categoryId: auth.categoryId,
        groupId: auth.groupId,
        templateId: template.id,
        allowed,
        coOwners: [],
        userPermissions: body.user_permissions ?? [],
        createDict,
      };
      let row: DeploymentRow | undefined;
      let ids: string[] = [];
      try {
        await db.transaction(async (tx) => {
          const query = queryOn(tx);
          await lockQuotaScopes(query, subjectOf(auth));
          const targets = await targetUsers(
            { allowed, userId: auth.userId, categoryId: auth.categoryId, createDict },
            auth.role,
            tx,
          );
          await checkDeploymentQuota(query, subjectOf(auth), {
            newDeployment: true,
            desktops: targets.length,
          });
          await sent?.card?.write();
          row = await app.deployments.create(values, tx);
          ids = await insertDesktops(row, template, targets, tx);
        });
      } catch (error) {
        await sent?.card?.remove();
        throw error;
      }
      if (!row) throw new ApiError('internal_server', 'Deployment not stored', 'unable_to_insert');
      publishToAudience(row, 'deployments.created', await listItem(row));
      await announceAndBuild(row, ids);
      app.log.info(
        { deployment: id, desktops: ids.length, agent: auth.userId },
        'deployment created',
      );
      return { id };
    },

    async show(auth: AuthContext, id: string): Promise<DeploymentDetail> {
      const row = await deploymentFor(auth, id);
      const item = await listItem(row);
      const named = await app.deployments.desktopsOf(row.id);
      const [owner] = await app.directory.usersByIds([row.userId]);
      return {
        ...item,
        desktops: named.map(desktopItemOf),
        ...(owner ? { owner: person(owner) } : {}),
      };
    },

    async info(auth: AuthContext, id: string): Promise<DeploymentInfo> {
      const row = await deploymentFor(auth, id);
      const dict = row.createDict;
      const groupIds = row.allowed.groups || [];
      const userIds = row.allowed.users || [];
      const [groups, people] = await Promise.all([
        app.directory.groupsByIds(groupIds),
        app.directory.usersByIds(userIds),
      ]);
      const allowed: AllowedExpanded = {
        roles: false,
        categories: false,
        groups:
          row.allowed.groups === false || row.allowed.groups === undefined
            ? false
            : groups.map((g) => ({
                id: g.id,
                name: g.name,
                uid: g.id,
                parent_category: g.categoryId,
                category_name: g.categoryName,
              })),
        users:
          row.allowed.users === false || row.allowed.users === undefined
            ? false
            : people.map((u) => ({
                id: u.id,
                name: u.name,
                uid: u.uid,
                group_name: u.groupName,
                category_name: u.categoryName,
              })),
      };
      return {
        id: row.id,
        name: row.desktopName,
        description: dict.description ?? row.description,
        template: row.templateId,
        ...(dict.guest_properties ? { guest_properties: dict.guest_properties } : {}),
        ...(dict.image ? { image: dict.image } : {}),
        hardware: (dict.hardware ?? {}) as DeploymentInfo['hardware'],
        ...(dict.hardware?.reservables ? { reservables: dict.hardware.reservables } : {}),
        allowed,
        tag: row.id,
        tag_name: row.name,
        tag_visible: row.visible,
        user_permissions: row.userPermissions,
        limited_hardware: null,
      };
    },

    /** PUT /deployment/{id}: the deployment and every desktop of it (all stopped). */
    async update(auth: AuthContext, id: string, body: DeploymentUpdate): Promise<void> {
      const row = await deploymentFor(auth, id);
      if (body.id !== undefined && body.id !== row.id)
        throw new ApiError('bad_request', 'The body names another deployment', 'bad_request');
      await assertNotCreating(row);
      const present = await app.deployments.desktopsOf(row.id);
      assertIdle(present);
      const template = row.templateId ? await app.templates.get(row.templateId) : undefined;
      await assertUsableReferences(
        auth,
        {
          ...(body.hardware ? { hardware: body.hardware } : {}),
          ...(body.image ? { image: body.image } : {}),
        },
        template,
      );
      if (body.name !== undefined) await assertNameFree(row.userId, body.name, row.id);
      const dict = row.createDict;
      const hardware = { ...(dict.hardware ?? {}), ...(body.hardware ?? {}) };
      const guestProperties = body.guest_properties ?? dict.guest_properties;
      if (guestProperties)
        checkViewers({
          viewers: guestProperties.viewers,
          interfaces: { ...NEW_DESKTOP_HARDWARE, ...template?.hardware, ...hardware }.interfaces,
          videos: { ...NEW_DESKTOP_HARDWARE, ...template?.hardware, ...hardware }.videos,
        });
      const sent = await cardImageOf(body.image);
      await sent?.card?.write();
      const createDict: DeploymentCreateDict = {
        ...dict,
        ...(body.description !== undefined ? { description: body.description } : {}),
        hardware,
        ...(guestProperties ? { guest_properties: guestProperties } : {}),
        ...(sent ? { image: sent.image } : {}),
      };
      const saved = await app.deployments.update(row.id, {
        ...(body.name !== undefined ? { name: body.name.trim() } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.desktop_name !== undefined ? { desktopName: body.desktop_name.trim() } : {}),
        ...(body.user_permissions !== undefined ? { userPermissions: body.user_permissions } : {}),
        createDict,
      });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      for (const d of present) {
        const name =
          body.desktop_name !== undefined && body.desktop_name.trim() !== d.row.name
            ? await freeName(d.row.userId, body.desktop_name.trim(), saved.name, db)
            : undefined;
        await app.desktops.update(
          d.row.id,
          {
            hardware: { ...d.row.hardware, ...(body.hardware ?? {}) },
            ...(body.guest_properties
              ? { guestProperties: { ...d.row.guestProperties, ...body.guest_properties } }
              : {}),
            ...(name ? { name } : {}),
            ...(body.description !== undefined ? { description: body.description ?? '' } : {}),
            ...(sent ? { image: sent.image } : {}),
          },
          IDLE_STATES,
        );
      }
      events.touch(row.id);
      publishToAudience(saved, 'deployments.updated', await listItem(saved));
    },

    /** PUT /deployment/users/{id}: new targets; desktops of users no longer targeted deleted. */
    async updateUsers(auth: AuthContext, id: string, sentAllowed: AllowedShareLists) {
      const row = await deploymentFor(auth, id);
      await assertNotCreating(row);
      const allowed = await app.allowedService.shareLists(auth, sentAllowed);
      const owner = await app.users.byId(row.userId);
      const targets = new Set(
        (await targetUsers({ ...row, allowed }, owner?.role ?? null)).map((t) => t.id),
      );
      const leaving = (await app.deployments.desktopsOf(row.id)).filter(
        (d) => !targets.has(d.row.userId),
      );
      assertIdle(leaving);
      const saved = await app.deployments.update(row.id, { allowed });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      await recreateNow(saved);
      events.touch(row.id);
    },

    async recreate(auth: AuthContext, id: string): Promise<void> {
      await recreateNow(await deploymentFor(auth, id));
    },

    /** Starts every stopped desktop (failures are left on the desktops). */
    async startAll(auth: AuthContext, id: string): Promise<void> {
      const row = await deploymentFor(auth, id);
      for (const d of await app.deployments.desktopsOf(row.id))
        if (IDLE_STATES.includes(d.row.state))
          await app.engine.start(d.row.id).catch((err: unknown) => {
            app.log.warn({ err, desktop: d.row.id }, 'deployment start failed');
          });
    },

    async stopAll(auth: AuthContext, id: string): Promise<void> {
      const row = await deploymentFor(auth, id);
      for (const d of await app.deployments.desktopsOf(row.id))
        if (RUNNING.includes(d.row.state))
          await app.engine.stop(d.row.id).catch((err: unknown) => {
            app.log.warn({ err, desktop: d.row.id }, 'deployment stop failed');
          });
    },

    /**
     * PUT /deployments/visible/{id}: flips the visibility of the deployment and all its desktops.
     * Shown: each user gets their desktop once (`desktop_add`). Hidden: each user gets
     * `desktop_delete`, and with `stop_started_domains` the started desktops are stopped.
     */
    async toggleVisible(auth: AuthContext, id: string, stopStarted: boolean): Promise<void> {
      const row = await deploymentFor(auth, id);
      const visible = !row.visible;
      const saved = await app.deployments.update(row.id, { visible });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      const present = await app.deployments.desktopsOf(row.id);
      for (const d of present) {
        if (visible) {
          // written without an event, then announced once as an add (never an update first)
          await app.desktops.table.update(d.row.id, { visible: true });
          await app.desktops.publishCurrent(d.row.id, 'desktops.created');
        } else {
          await app.desktops.update(d.row.id, { visible: false });
          if (stopStarted && RUNNING.includes(d.row.state))
            await app.engine.stop(d.row.id).catch((err: unknown) => {
              app.log.warn({ err, desktop: d.row.id }, 'deployment stop failed');
            });
        }
      }
      events.touch(
        row.id,
        present.map((d) => d.row.id),
      );
    },

    /** PUT /deployments/domain/visible/{id}: flips one desktop of a deployment the caller manages. */
    async toggleDesktopVisible(auth: AuthContext, desktopId: string): Promise<void> {
      const desktop = await app.desktops.byId(desktopId);
      if (!desktop?.tag) throw new ApiError('not_found', 'Desktop not found', 'not_found');
      const row = await deploymentFor(auth, desktop.tag);
      const visible = !desktop.visible;
      if (visible && row.visible) {
        await app.desktops.table.update(desktop.id, { visible: true });
        await app.desktops.publishCurrent(desktop.id, 'desktops.created');
      } else if (visible) {
        await app.desktops.table.update(desktop.id, { visible: true });
      } else {
        await app.desktops.update(desktop.id, { visible: false });
      }
      events.touch(row.id, [desktop.id]);
    },

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

    async coOwners(auth: AuthContext, id: string): Promise<DeploymentCoOwners> {
      const row = await deploymentFor(auth, id);
      const people = await app.directory.usersByIds([row.userId, ...row.coOwners]);
      const byId = new Map(people.map((p) => [p.id, p]));
      const owner = byId.get(row.userId);
      return {
        owner: owner ? person(owner) : { id: row.userId, name: '[Deleted]' },
        co_owners: row.coOwners.flatMap((c) => {
          const p = byId.get(c);
          return p ? [person(p)] : [];
        }),
      };
    },

    /**
     * PUT /deployment/co-owners/{id} (owner, manager, admin): the owner and users with role
     * `user` are left out; every other id must be a user the caller could share with.
     */
    async updateCoOwners(auth: AuthContext, id: string, coOwners: readonly string[]) {
      const row = await deploymentFor(auth, id, 'own');
      const found = new Map(
        (await app.directory.usersByIds([...new Set(coOwners)])).map((u) => [u.id, u]),
      );
      const kept: string[] = [];
      coOwners.forEach((userId, i) => {
        const u = found.get(userId);
        if (!u)
          throw new ApiError(
            'not_found',
            `Unknown ${userId}`,
            'not_found',
            { id: userId },
            {
              errors: { [`/co_owners/${i}`]: 'not_found' },
            },
          );
        if (auth.role !== 'admin' && u.categoryId !== row.categoryId)
          throw new ApiError(
            'forbidden',
            `You can not share with ${userId}`,
            'allowed_out_of_scope',
            { id: userId },
            { errors: { [`/co_owners/${i}`]: 'allowed_out_of_scope' } },
          );
        if (u.id !== row.userId && u.role !== 'user' && !kept.includes(u.id)) kept.push(u.id);
      });
      const saved = await app.deployments.update(row.id, { coOwners: kept });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      const item = await listItem(saved);
      const added = kept.filter((c) => !row.coOwners.includes(c));
      const dropped = row.coOwners.filter((c) => !kept.includes(c));
      publishToAudience(saved, 'deployments.created', item, added);
      for (const ownerId of dropped)
        app.events.publish({
          name: 'deployments.deleted',
          payload: { id: row.id, version: saved.version },
          ownerId,
        });
      publishToAudience(
        saved,
        'deployments.updated',
        item,
        audienceOf(row).filter((a) => !dropped.includes(a)),
      );
    },

    async permissions(auth: AuthContext, id: string): Promise<DeploymentUserPermissions> {
      return [...(await deploymentFor(auth, id)).userPermissions].sort();
    },

    /** The quota check of a new deployment, with the desktops its targets would get when sent. */
    async checkQuota(auth: AuthContext, sent?: AllowedShareLists): Promise<void> {
      let desktopsCount = 0;
      if (sent) {
        const allowed = await app.allowedService.shareLists(auth, sent);
        desktopsCount = (
          await targetUsers(
            { allowed, userId: auth.userId, categoryId: auth.categoryId, createDict: {} },
            auth.role,
          )
        ).length;
      }
      await checkDeploymentQuota(app.database.query, subjectOf(auth), {
        newDeployment: true,
        desktops: desktopsCount,
      });
    },

    /** PUT /groups_users/count: distinct users of the groups (any state), plus one for the caller. */
    async countGroupsUsers(auth: AuthContext, groupIds: readonly string[]): Promise<number> {
      const allowed = await app.allowedService.shareLists(auth, { groups: [...groupIds] });
      const groupsList = allowed.groups || [];
      if (groupsList.length === 0) return 1;
      const rows = await db
        .select({ n: sql<number>`count(DISTINCT ${users.id})::int` })
        .from(users)
        .where(and(inArray(users.groupId, groupsList), ne(users.id, auth.userId)));
      return Number(rows[0]?.n ?? 0) + 1;
    },

    /**
     * GET /deployments/directviewer_csv/{id}: every desktop gets a NEW direct-viewer link (links
     * are kept only hashed, so a link can be written down only when it is made): downloading the
     * file ends the links of any earlier download.
     */
    async directViewerCsv(
      auth: AuthContext,
      id: string,
    ): Promise<{ filename: string; content: string }> {
      const row = await deploymentFor(auth, id);
      const present = await app.deployments.desktopsOf(row.id);
      const lines: string[][] = [];
      for (const d of present) {
        const token = await app.directViewer.issue(d.row.id);
        lines.push([
          d.username ?? '',
          d.userName ?? '',
          d.email ?? '',
          app.directViewer.linkUrl(token),
        ]);
      }
      app.log.info(
        { deployment: row.id, agent: auth.userId, links: lines.length },
        'direct-viewer links issued',
      );
      return {
        filename: csvFileName(row.id),
        content: csvFile(['username', 'name', 'email', 'url'], lines),
      };
    },
  };
}
