/**
 * What the desktop calls do, between the routes (which validate and answer) and the repositories
 * and engine (which store and run): create persistent and temporary desktops inside the quota,
 * edit with the desktop rules, delete to the recycle bin or for good, recreate a disk, build the
 * show answer, the allowed hardware and the viewers.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { constants } from '../../../../src/generated/constants.ts';
import {
  desktopFromCreate,
  desktopFromUpdate,
  desktopToInfo,
  type DesktopRow,
} from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { assertDesktopAccess, canManageDesktop, isAllowed } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { ruleStates } from '../../../../common/state-actions.ts';
import { configuredViewers } from '../../../../common/viewers.ts';
import type {
  DesktopCreate,
  DesktopHardware,
  DesktopInfo,
  DesktopUpdate,
  DesktopViewerAnswer,
  HardwareAllowed,
  ImageUpload,
  ViewerKey,
} from '../../../../src/generated/types.ts';
import { resourceOf } from '../../../../src/generated/resources.ts';
import { prepareCardImage, readCardImage, type PreparedCard } from './card-images.ts';
import { createReferenceCheck, hardwareCatalog } from './desktop-references.ts';
import { assertStateAllows, checkViewers } from './desktop-rules.ts';
import {
  appliedQuota,
  assertHardwareWithin,
  checkDesktopCreate,
  checkDesktopStart,
  hardwareLimits,
  lockQuotaScopes,
} from '../quotas/index.ts';
import { stockImageOf, type OwnedDesktopRow } from './desktops-repository.ts';
import { profilesOf } from './desktop-rules.ts';
import { VNC_WS_PATH } from '../../platform/viewers/vnc-proxy.ts';

const subjectOf = (auth: AuthContext) => ({
  userId: auth.userId,
  groupId: auth.groupId,
  categoryId: auth.categoryId,
  role: auth.role,
});

/** States in which a desktop has a screen (thumbnails, consoles). */
export const VIEWER_STATES = ruleStates('desktops', 'viewer');

/** The SPA route of the browser VNC viewer, from the desktops resource. */
const VNC_VIEWER_ROUTE = resourceOf('desktops')?.meta.extraRoutes.viewer ?? '/viewer/vnc/:id';

const { boot_order, videos, graphics, interfaces, isos, floppies, ...scalars } =
  constants.desktops.newDesktopHardware.value;
/** The documented hardware of a new desktop (1 vcpu, 1 GB memory, 1 GB disk, boot from disk). */
export const NEW_DESKTOP_HARDWARE: DesktopHardware = {
  ...scalars,
  boot_order: [...boot_order],
  videos: [...videos],
  graphics: [...graphics],
  interfaces: [...interfaces],
  isos: [...isos],
  floppies: [...floppies],
};

/** A new desktop's hardware: the documented defaults, the template's, then what was sent. */
function mergeHardware(base: DesktopHardware, sent: DesktopHardware | undefined): DesktopHardware {
  return withGpuVideo({ ...NEW_DESKTOP_HARDWARE, ...base, ...(sent ?? {}) });
}

/** A GPU-less desktop's video is reset to Default (GPU-only video needs a GPU profile). */
function withGpuVideo(hardware: DesktopHardware): DesktopHardware {
  const vgpus = (hardware.reservables?.vgpus ?? []).filter((v) => v !== 'None');
  const videos = hardware.videos ?? [];
  return vgpus.length === 0 && videos.includes('none')
    ? { ...hardware, videos: ['default'] }
    : hardware;
}

export type DesktopService = ReturnType<typeof createDesktopService>;

export function createDesktopService(app: FastifyInstance) {
  const { db } = app;

  /**
   * The desktop the caller may manage: 404 when unknown, 403 when somebody else's. A deployment
   * desktop is also managed by those who manage its deployment, and its user can not act on it
   * while the deployment (or the desktop) is invisible (deployment-service.ts).
   */
  const desktopFor = async (auth: AuthContext, id: string): Promise<OwnedDesktopRow> => {
    const desktop = await app.desktops.byId(id);
    if (
      desktop?.tag &&
      !canManageDesktop(auth, desktop) &&
      (await app.deploymentService.managesDeploymentOf(auth, desktop))
    )
      return desktop;
    const owned = assertDesktopAccess(auth, desktop);
    await app.deploymentService.assertDesktopUsable(auth, owned);
    return owned;
  };

  /** Every id a body names must be one the caller may use (one check for all desktop calls). */
  const assertUsableReferences = createReferenceCheck(app);

  /**
   * Card image of a create/update body: a stock card id, or an uploaded file checked and encoded
   * now and stored (`card.write()`) only once the database checks have passed.
   */
  const cardImageOf = async (
    image: ImageUpload | undefined,
  ): Promise<
    | { image: { type: 'stock'; id: string; url: string }; card?: undefined }
    | { image: PreparedCard['image']; card: PreparedCard }
    | undefined
  > => {
    if (!image) return undefined;
    if (image.type === 'user' && image.file) {
      const card = await prepareCardImage(app.config.dataDir, image.file.data);
      return { image: card.image, card };
    }
    if (image.type === 'stock' && image.id)
      return { image: { type: 'stock' as const, id: image.id, url: '' } };
    return undefined;
  };

  /** Stops the VM, deletes the row and the disk (no recycle bin). */
  const removeDesktop = async (desktop: DesktopRow, deleteDisk: boolean) => {
    await app.engine.destroy(desktop.id, { deleteDisk });
    app.viewers.vnc.closeDesktop(desktop.id);
    await app.desktops.remove(desktop.id);
  };

  const assertNameFree = async (userId: string, name: string, exceptId?: string, on = db) => {
    if (await app.desktops.nameTaken(userId, name, exceptId, on))
      throw new ApiError(
        'conflict',
        'A desktop with this name already exists',
        'new_desktop_name_exists',
        {
          name: name.trim(),
        },
      );
  };

  /**
   * The viewers must be reachable with the resulting hardware, and the hardware the caller asked for
   * must fit the quota that applies to them.
   */
  const assertHardwareAllowed = async (
    auth: AuthContext,
    viewers: Parameters<typeof checkViewers>[0]['viewers'],
    hardware: DesktopHardware,
    requested: DesktopHardware | undefined,
  ) => {
    checkViewers({ viewers, interfaces: hardware.interfaces, videos: hardware.videos });
    assertHardwareWithin(
      hardwareLimits(await appliedQuota(app.database.query, subjectOf(auth))),
      requested ?? {},
    );
  };

  /**
   * A desktop whose GPU profile changed loses its bookings that have not ended (they were of the
   * other profile); one whose profile stayed keeps them.
   */
  const bookingsFollowProfile = async (desktop: DesktopRow, profiles: readonly string[]) => {
    const before = profilesOf(desktop.hardware);
    if (before.length === profiles.length && before.every((p, i) => profiles[i] === p)) return;
    await app.bookingService.profileChanged(desktop.id);
  };

  return {
    desktopFor,

    /**
     * Stops a desktop's VM and deletes it with its disk, no recycle bin, whoever owns it: for
     * callers that have already checked the rights (a disabled template's temporary desktops).
     */
    discard: (desktop: DesktopRow) => removeDesktop(desktop, true),

    /** A persistent desktop from a template: stored `creating`, its disk made in the background. */
    async createPersistent(auth: AuthContext, body: DesktopCreate): Promise<{ id: string }> {
      const template = await assertUsableReferences(auth, body);
      if (!template) throw new ApiError('not_found', 'Template not found', 'not_found');
      const guestProperties = body.guest_properties ?? template.guestProperties;
      const hardware = mergeHardware(template.hardware, body.hardware);
      await assertHardwareAllowed(auth, guestProperties.viewers, hardware, body.hardware);
      const id = randomUUID();
      const sent = await cardImageOf(body.image);
      try {
        await db.transaction(async (tx) => {
          // Creates counted against the same user, group or category quota wait for each other,
          // so a quota or limit with one unit left admits exactly one desktop.
          const query = queryOn(tx);
          await lockQuotaScopes(query, subjectOf(auth));
          await checkDesktopCreate(query, subjectOf(auth), 'desktops');
          await assertNameFree(auth.userId, body.name, undefined, tx);
          await sent?.card?.write();
          await app.desktops.table.create(
            {
              ...desktopFromCreate(body),
              id,
              userId: auth.userId,
              categoryId: auth.categoryId,
              groupId: auth.groupId,
              name: body.name.trim(),
              description: body.description ?? template.description,
              type: 'persistent',
              state: 'creating',
              templateId: template.id,
              hardware,
              guestProperties,
              image: sent?.image ?? stockImageOf(id),
            },
            tx,
          );
        });
      } catch (error) {
        await sent?.card?.remove();
        throw error;
      }
      await app.desktops.publishCurrent(id, 'desktops.created');
      app.engine.background(app.engine.createDisk(id), 'disk creation failed', id);
      return { id };
    },

    /** The caller's temporary desktop of a template: reused (and started) when it exists. */
    async createTemporary(auth: AuthContext, templateId: string): Promise<{ id: string }> {
      const template = await assertUsableReferences(auth, { template_id: templateId });
      if (!template) throw new ApiError('not_found', 'Template not found', 'not_found');
      // A temporary desktop starts at once: it can not wait for a booking of a GPU profile.
      if (profilesOf(template.hardware).length > 0)
        throw new ApiError(
          'precondition_required',
          'A temporary desktop can not use a reservable profile',
          'temporal_new_reservable',
        );
      await checkDesktopStart(app.database.query, subjectOf(auth), {
        memory: Number(template.hardware.memory ?? 1),
        vcpus: Number(template.hardware.vcpus ?? 1),
      });
      const existing = await app.desktops.fromTemplate(auth.userId, 'nonpersistent', template.id);
      const [only] = existing;
      if (existing.length === 1 && only) {
        if (only.state !== 'started') await app.engine.start(only.id).catch(() => undefined);
        return { id: only.id };
      }
      for (const d of existing) await removeDesktop(d, true);
      const id = randomUUID();
      await db.transaction(async (tx) => {
        const query = queryOn(tx);
        await lockQuotaScopes(query, subjectOf(auth));
        await checkDesktopCreate(query, subjectOf(auth), 'volatile');
        await app.desktops.table.create(
          {
            id,
            userId: auth.userId,
            categoryId: auth.categoryId,
            groupId: auth.groupId,
            name: template.name,
            description: template.description,
            type: 'nonpersistent',
            state: 'creating',
            templateId: template.id,
            hardware: mergeHardware(template.hardware, undefined),
            guestProperties: template.guestProperties,
            image: template.image,
          },
          tx,
        );
      });
      await app.desktops.publishCurrent(id, 'desktops.created');
      app.engine.background(
        app.engine.createDisk(id, { startAfter: true }),
        'disk creation failed',
        id,
      );
      return { id };
    },

    async deleteTemporary(auth: AuthContext, id: string): Promise<void> {
      const desktop = await desktopFor(auth, id);
      if (desktop.type !== 'nonpersistent')
        throw new ApiError('bad_request', 'Not a temporary desktop', 'bad_request');
      await removeDesktop(desktop, true);
    },

    /**
     * Deletes a stopped desktop: to the recycle bin while the retention allows (the disk stays
     * until the entry is purged), for good when asked, when the retention is "immediate", or for
     * deployment desktops.
     */
    async delete(auth: AuthContext, id: string, permanent: boolean): Promise<void> {
      const desktop = await desktopFor(auth, id);
      assertStateAllows('delete', desktop.state);
      const settings = await app.settings.all();
      const cutoff = (settings as { recycle_bin_cutoff_time?: number | null })
        .recycle_bin_cutoff_time;
      if (permanent || cutoff === 0 || desktop.tag !== null) return removeDesktop(desktop, true);
      const diskPath = desktop.diskPath ?? app.engine.diskPath(desktop.id);
      const size = await app.engine.diskUsage(diskPath);
      await app.engine.destroy(desktop.id, { deleteDisk: false });
      const { ownerRole: _ownerRole, ...row } = desktop;
      // The row leaves and its entry arrives in one transaction: of two deletes at once one
      // claims the row and the other finds it gone, so a desktop makes one entry and is never lost.
      const { entry, removed } = await db.transaction(async (tx) => {
        const gone = await app.desktops.table.remove(desktop.id, tx);
        if (!gone) throw new ApiError('not_found', 'Desktop not found', 'not_found');
        const created = await app.recycleBin.create(
          {
            id: randomUUID(),
            ownerId: desktop.userId,
            agentId: auth.userId,
            itemType: 'desktop',
            itemName: desktop.name,
            status: 'recycled',
            size,
            data: {
              desktops: [{ ...row, runtime: {}, state: 'stopped' }],
              storages: [
                {
                  id: desktop.id,
                  directory_path: diskPath,
                  status: 'recycled',
                  actual_size: size,
                },
              ],
              agent_name: auth.name,
            },
          },
          tx,
        );
        return { entry: created, removed: gone };
      });
      app.desktops.announceRemoved(removed);
      app.events.publish({
        name: 'recycle-bins.created',
        payload: {
          id: entry.id,
          item_type: 'desktop',
          item_name: desktop.name,
          status: 'recycled',
          size,
          accessed: Math.floor(entry.accessed.getTime() / 1000),
          desktops: 1,
          templates: 0,
          deployments: 0,
          storages: 1,
        },
        ownerId: desktop.userId,
      });
    },

    /** Edits a stopped desktop; answers what was applied (the stored card image when one was sent). */
    async update(auth: AuthContext, id: string, body: DesktopUpdate): Promise<DesktopUpdate> {
      const desktop = await desktopFor(auth, id);
      if (desktop.server && (body.hardware || body.guest_properties))
        throw new ApiError(
          'precondition_required',
          'A server can not be edited',
          'server_not_editable',
        );
      assertStateAllows('edit', desktop.state);
      await assertUsableReferences(auth, body, desktop);
      if (body.name !== undefined) await assertNameFree(desktop.userId, body.name, desktop.id);
      const hardware = withGpuVideo({ ...desktop.hardware, ...(body.hardware ?? {}) });
      const guestProperties = body.guest_properties
        ? { ...desktop.guestProperties, ...body.guest_properties }
        : desktop.guestProperties;
      if (body.hardware || body.guest_properties) {
        await assertHardwareAllowed(auth, guestProperties.viewers, hardware, body.hardware);
      }
      const sent = await cardImageOf(body.image);
      const image = sent?.image;
      const patch = {
        ...desktopFromUpdate(body),
        hardware,
        guestProperties,
        ...(body.name !== undefined ? { name: body.name.trim() } : {}),
        ...(image ? { image } : {}),
      };
      await sent?.card?.write();
      const updated = await app.desktops
        .update(desktop.id, patch, ['stopped', 'failed'])
        .catch(async (error: unknown) => {
          await sent?.card?.remove();
          throw error;
        });
      if (!updated) {
        await sent?.card?.remove();
        throw new ApiError(
          'precondition_required',
          'The desktop changed state',
          'desktop_not_stopped',
        );
      }
      await bookingsFollowProfile(desktop, profilesOf(hardware));
      const { image: _sent, ...echo } = body;
      return image ? { ...echo, image } : echo;
    },

    async updateReservables(
      auth: AuthContext,
      id: string,
      vgpus: readonly string[],
    ): Promise<void> {
      const desktop = await desktopFor(auth, id);
      await assertUsableReferences(
        auth,
        { hardware: { reservables: { vgpus: [...vgpus] } } },
        desktop,
      );
      // "None" is the absence of a GPU profile, stored as null.
      const chosen = vgpus.filter((v) => v !== 'None');
      await app.desktops.update(desktop.id, {
        hardware: {
          ...desktop.hardware,
          reservables: { vgpus: chosen.length > 0 ? chosen : null },
        },
      });
      await bookingsFollowProfile(desktop, chosen);
    },

    /** GET /domain/info/{id}: a desktop the caller manages, or a template the caller may use. */
    async info(auth: AuthContext, id: string): Promise<DesktopInfo> {
      const desktop = await app.desktops.byId(id);
      if (desktop) {
        assertDesktopAccess(auth, desktop);
        return {
          ...desktopToInfo(desktop),
          kind: 'desktop',
          limited_hardware: null,
          needs_booking: profilesOf(desktop.hardware).length > 0,
          booking_id: desktop.bookingId ?? false,
        };
      }
      const template = await app.templates.get(id);
      if (!template) throw new ApiError('not_found', 'Desktop not found', 'not_found');
      if (!isAllowed(auth, template))
        throw new ApiError('forbidden', 'Template not allowed', 'template_not_allowed');
      return {
        id: template.id,
        kind: 'template',
        name: template.name,
        description: template.description,
        image: template.image,
        guest_properties: template.guestProperties,
        hardware: mergeHardware(template.hardware, undefined),
        limited_hardware: null,
      };
    },

    async hardwareAllowed(auth: AuthContext): Promise<HardwareAllowed> {
      const applied = await appliedQuota(app.database.query, subjectOf(auth));
      return {
        ...hardwareCatalog(auth, await app.bookingService.allowedProfiles(auth)),
        forced_hyp: [],
        favourite_hyp: [],
        quota: applied.quota,
        restriction_applied: applied.restriction_applied,
        limits: hardwareLimits(applied),
      } as HardwareAllowed;
    },

    checkCreateQuota: (auth: AuthContext) =>
      checkDesktopCreate(app.database.query, subjectOf(auth), 'desktops'),

    async checkStartQuota(auth: AuthContext, desktop: DesktopRow): Promise<void> {
      await checkDesktopStart(app.database.query, subjectOf(auth), {
        memory: Number(desktop.hardware.memory ?? 1),
        vcpus: Number(desktop.hardware.vcpus ?? 1),
      });
    },

    async recreateDisk(auth: AuthContext, id: string): Promise<void> {
      const desktop = await desktopFor(auth, id);
      // a user recreates a deployment desktop's disk only when the deployment allows it
      await app.deploymentService.assertUserMay(auth, desktop, 'recreate');
      assertStateAllows('recreateDisk', desktop.state);
      const template = desktop.templateId ? await app.templates.get(desktop.templateId) : undefined;
      if (!template?.diskPath)
        throw new ApiError(
          'precondition_required',
          'The desktop has no template disk to recreate from',
          'storage_has_no_parent',
        );
      await app.engine.recreateDisk(desktop.id, template.diskPath);
      await app.desktops.update(desktop.id, { detail: null });
    },

    cardImage: (file: string) => readCardImage(app.config.dataDir, file),

    /** The latest screenshot of a running desktop, at most 3 s old while somebody watches it. */
    async thumbnail(auth: AuthContext, id: string): Promise<Buffer> {
      const desktop = await desktopFor(auth, id);
      if (!VIEWER_STATES.includes(desktop.state))
        throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
          status: 409,
        });
      let shot = app.idle.lastScreenshot(desktop.id);
      if (!shot || (app.idle.viewers(desktop.id) > 0 && Date.now() - shot.at.getTime() > 3000))
        shot = await app.idle.refreshScreenshot(desktop.id).catch(() => shot);
      if (!shot) throw new ApiError('not_found', 'No screenshot yet', 'not_found');
      return shot.png;
    },

    /**
     * Opens a viewer of a running desktop: a single-use console ticket for the browser VNC viewer,
     * a .vv file whose proxy is this server for SPICE clients.
     */
    /**
     * A viewer of a running desktop: a browser viewer's single-use ticket (bound to the caller's
     * login session), or a SPICE file with a fresh password and tunnel credential.
     */
    async viewer(auth: AuthContext, id: string, viewer: ViewerKey): Promise<DesktopViewerAnswer> {
      const desktop = await desktopFor(auth, id);
      if (!configuredViewers(desktop.guestProperties.viewers).includes(viewer))
        throw new ApiError(
          'not_found',
          `The desktop has no ${viewer} viewer`,
          'viewer_not_configured',
          { viewer },
        );
      assertStateAllows('viewer', desktop.state);
      const rt = desktop.runtime;
      if (!rt.vncPort || !rt.spicePort)
        throw new ApiError('conflict', 'The desktop is not running', 'viewer_not_started', null, {
          status: 409,
        });
      await app.desktops.update(desktop.id, { accessed: new Date() });
      if (viewer === 'browser-vnc') {
        const { ticket, expiresAt } = app.viewers.tickets.issue({
          userId: auth.userId,
          sessionId: auth.sessionId,
          desktopId: desktop.id,
          protocol: 'vnc',
        });
        return {
          kind: 'browser' as const,
          protocol: 'vnc',
          viewer: VNC_VIEWER_ROUTE.replace(':id', desktop.id),
          url: `${VNC_WS_PATH}?ticket=${ticket}`,
          expires: Math.floor(expiresAt / 1000),
          values: { vmName: desktop.name, password: rt.vncPassword ?? '' },
        };
      }
      if (viewer === 'file-spice') return app.viewers.spiceFile(auth, desktop);
      throw new ApiError(
        'precondition_required',
        'RDP viewers need the wireguard network, which is not enabled',
        'no_wireguard_keys',
        { viewer },
      );
    },
  };
}
