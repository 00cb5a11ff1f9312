/**
 * Creating and editing deployments: create (the deployment and its desktops in one transaction
 * inside the owner's quotas, the disks made after the answer), edit (the deployment and every
 * desktop of it, all stopped), new target users, recreate.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, ne, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import {
  deploymentFromCreate,
  deploymentFromUpdate,
  deployments,
  type DeploymentInsert,
  type DeploymentRow,
} from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import {
  prepareCardImage,
  releaseCardImages,
  createReferenceCheck,
  checkViewers,
  NEW_DESKTOP_HARDWARE,
} from '../desktops/index.ts';
import type {
  AllowedShareLists,
  DeploymentCreate,
  DeploymentCreateDict,
  DeploymentUpdate,
  DesktopHardware,
  ImageUpload,
} from '../../../../src/generated/types.ts';
import {
  lockQuotaScopes,
  checkDeploymentQuota,
  checkTargetDesktopLimits,
} from '../quotas/index.ts';
import { IDLE_STATES, subjectOf, type DeploymentDeps } from './deployment-deps.ts';
import type { DeploymentDesktops } from './deployment-desktops.ts';
import type { DeploymentTargets } from './deployment-targets.ts';

export function deploymentWrites(
  { app, events, answers, deploymentFor, publishToAudience }: DeploymentDeps,
  { targetUsers, freeName, insertDesktops }: DeploymentTargets,
  { announceAndBuild, assertIdle, assertNotCreating, recreateNow }: DeploymentDesktops,
) {
  const { db } = app;
  const { listItem } = answers;
  const assertUsableReferences = createReferenceCheck(app);

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

  return {
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
          await checkTargetDesktopLimits(query, targets);
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
        // every stored field of the body, by the generated mapper; then what differs
        ...deploymentFromUpdate(body),
        ...(body.name !== undefined ? { name: body.name.trim() } : {}),
        ...(body.desktop_name !== undefined ? { desktopName: body.desktop_name.trim() } : {}),
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
      // The cards the deployment and its desktops had before, unless something still shows them.
      if (sent)
        await releaseCardImages(app.config.dataDir, app.database.query, [
          dict.image,
          ...present.map((d) => d.row.image),
        ]);
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
  };
}
