/**
 * What the desktop calls do, between the routes (which validate and answer) and the repositories
 * and engine (which store and run): create persistent and temporary desktops inside the quota,
 * edit with the desktop rules, delete to the recycle bin or for good, recreate a disk, build the
 * show answer, the allowed hardware and the viewers.
 */
import type { FastifyInstance } from 'fastify';
import { desktopFromUpdate, desktopToInfo, type DesktopRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { assertDesktopAccess, isAllowed } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  DesktopCreate,
  DesktopInfo,
  DesktopUpdate,
  DesktopViewerAnswer,
  HardwareAllowed,
  ViewerKey,
} from '../../../../src/generated/types.ts';
import { readCardImage, releaseCardImages } from './card-images.ts';
import { hardwareCatalog } from './desktop-references.ts';
import { networkItems } from './networks.ts';
import { assertStateAllows } from './desktop-rules.ts';
import {
  appliedQuota,
  checkDesktopCreate,
  checkDesktopStart,
  hardwareLimits,
} from '../quotas/index.ts';
import { profilesOf } from './desktop-rules.ts';
import { desktopStates } from '../../../../src/generated/policy.ts';
import { mergeHardware, withGpuVideo } from './desktop-hardware.ts';
import { createDesktopContext } from './desktop-context.ts';
import { createPersistentDesktop, createTemporaryDesktop } from './desktop-create.ts';
import { recycleDesktop } from './desktop-recycle.ts';
import { assertHostExists } from './hypervisors.ts';
import { desktopThumbnail, openViewer } from './desktop-viewing.ts';

export type DesktopService = ReturnType<typeof createDesktopService>;

export function createDesktopService(app: FastifyInstance) {
  const ctx = createDesktopContext(app);

  return {
    desktopFor: ctx.desktopFor,

    /**
     * Stops a desktop's VM and deletes it with its disk, no recycle bin, whoever owns it: for
     * callers that have already checked the rights (a disabled template's temporary desktops).
     */
    discard: (desktop: DesktopRow) => ctx.removeDesktop(desktop, true),

    /** A persistent desktop from a template: stored `creating`, its disk made in the background. */
    createPersistent(auth: AuthContext, body: DesktopCreate): Promise<{ id: string }> {
      return createPersistentDesktop(ctx, auth, body);
    },

    /** The caller's temporary desktop of a template: reused (and started) when it exists. */
    createTemporary(auth: AuthContext, templateId: string): Promise<{ id: string }> {
      return createTemporaryDesktop(ctx, auth, templateId);
    },

    async deleteTemporary(auth: AuthContext, id: string): Promise<void> {
      const desktop = await ctx.desktopFor(auth, id);
      if (desktop.type !== 'nonpersistent')
        throw new ApiError('bad_request', 'Not a temporary desktop', 'bad_request');
      await ctx.removeDesktop(desktop, true);
    },

    /**
     * Deletes a stopped desktop: to the recycle bin while the retention allows (the disk stays
     * until the entry is purged), for good when asked, when the retention is "immediate", or for
     * deployment desktops.
     */
    async delete(auth: AuthContext, id: string, permanent: boolean): Promise<void> {
      const desktop = await ctx.desktopFor(auth, id);
      assertStateAllows('delete', desktop.state);
      const settings = await app.settings.all();
      const cutoff = (settings as { recycle_bin_cutoff_time?: number | null })
        .recycle_bin_cutoff_time;
      if (permanent || cutoff === 0 || desktop.tag !== null)
        return ctx.removeDesktop(desktop, true);
      await recycleDesktop(ctx, auth, desktop);
    },

    /** Edits a stopped desktop; answers what was applied (the stored card image when one was sent). */
    async update(auth: AuthContext, id: string, body: DesktopUpdate): Promise<DesktopUpdate> {
      const desktop = await ctx.desktopFor(auth, id);
      if (desktop.server && (body.hardware || body.guest_properties))
        throw new ApiError(
          'precondition_required',
          'A server can not be edited',
          'server_not_editable',
        );
      assertStateAllows('edit', desktop.state);
      await ctx.assertUsableReferences(auth, body, desktop);
      if (body.name !== undefined) await ctx.assertNameFree(desktop.userId, body.name, desktop.id);
      if (body.forced_hyp) await assertHostExists(app.db, body.forced_hyp);
      const merged = { ...desktop.hardware, ...(body.hardware ?? {}) };
      const hardware = withGpuVideo(merged);
      const guestProperties = body.guest_properties
        ? { ...desktop.guestProperties, ...body.guest_properties }
        : desktop.guestProperties;
      if (body.hardware || body.guest_properties) {
        await ctx.assertHardwareAllowed(auth, guestProperties.viewers, hardware, body.hardware);
      }
      const sent = await ctx.cardImageOf(body.image);
      const image = sent?.image;
      const patch = {
        ...desktopFromUpdate(body),
        ...(body.server !== undefined ? { server: body.server } : {}),
        ...(body.forced_hyp !== undefined ? { forcedHyp: body.forced_hyp } : {}),
        // The JSON columns are written when the edit changes them (a GPU-less desktop without a
        // video card gets the default one back).
        ...(body.hardware || hardware !== merged ? { hardware } : {}),
        ...(body.guest_properties ? { guestProperties } : {}),
        ...(body.name !== undefined ? { name: body.name.trim() } : {}),
        ...(image ? { image } : {}),
      };
      await sent?.card?.write();
      const updated = await app.desktops
        .update(desktop.id, patch, desktopStates.editable)
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
      await ctx.bookingsFollowProfile(desktop, profilesOf(hardware));
      // The card it had before, unless something else still shows it.
      if (image) await releaseCardImages(app.config.dataDir, app.database.query, [desktop.image]);
      const { image: _sent, ...echo } = body;
      return image ? { ...echo, image } : echo;
    },

    async updateReservables(
      auth: AuthContext,
      id: string,
      vgpus: readonly string[],
    ): Promise<void> {
      const desktop = await ctx.desktopFor(auth, id);
      await ctx.assertUsableReferences(
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
      await ctx.bookingsFollowProfile(desktop, chosen);
    },

    /** GET /domain/info/{id}: a desktop the caller manages, or a template the caller may use. */
    async info(auth: AuthContext, id: string): Promise<DesktopInfo> {
      const desktop = await app.desktops.byId(id);
      if (desktop) {
        assertDesktopAccess(auth, desktop);
        return {
          ...desktopToInfo(desktop),
          kind: 'desktop',
          server: desktop.server,
          forced_hyp: desktop.forcedHyp ?? null,
          limited_hardware: null,
          needs_booking: profilesOf(desktop.hardware).length > 0,
          next_booking_start: desktop.nextBookingStart?.toISOString() ?? null,
          next_booking_end: desktop.nextBookingEnd?.toISOString() ?? null,
          booking_id: desktop.bookingId ?? false,
        };
      }
      const template = await app.templates.get(id);
      if (!template) throw new ApiError('not_found', 'Desktop not found', 'not_found');
      const owner = await app.users.byId(template.userId);
      if (!isAllowed(auth, { ...template, ownerRole: owner?.role ?? null }))
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
      const applied = await appliedQuota(app.database.query, ctx.subjectOf(auth));
      return {
        ...hardwareCatalog(
          auth,
          await app.bookingService.allowedProfiles(auth),
          await networkItems(app.db, auth),
        ),
        forced_hyp: [],
        favourite_hyp: [],
        quota: applied.quota,
        restriction_applied: applied.restriction_applied,
        limits: hardwareLimits(applied),
      } as HardwareAllowed;
    },

    checkCreateQuota: (auth: AuthContext) =>
      checkDesktopCreate(app.database.query, ctx.subjectOf(auth), 'desktops'),

    async checkStartQuota(auth: AuthContext, desktop: DesktopRow): Promise<void> {
      await checkDesktopStart(app.database.query, ctx.subjectOf(auth), {
        memory: Number(desktop.hardware.memory ?? 1),
        vcpus: Number(desktop.hardware.vcpus ?? 1),
      });
    },

    async recreateDisk(auth: AuthContext, id: string): Promise<void> {
      const desktop = await ctx.desktopFor(auth, id);
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

    /** Removes the card files of these images that nothing shows any more (releaseCardImages). */
    releaseCards: (images: readonly unknown[]) =>
      releaseCardImages(app.config.dataDir, app.database.query, images),

    /** The latest screenshot of a running desktop, at most 3 s old while somebody watches it. */
    thumbnail(auth: AuthContext, id: string): Promise<Buffer> {
      return desktopThumbnail(ctx, auth, id);
    },

    /**
     * A viewer of a running desktop: a browser viewer's single-use ticket (bound to the caller's
     * login session), or a SPICE file with a fresh password and tunnel credential.
     */
    viewer(auth: AuthContext, id: string, viewer: ViewerKey): Promise<DesktopViewerAnswer> {
      return openViewer(ctx, auth, id, viewer);
    },
  };
}
