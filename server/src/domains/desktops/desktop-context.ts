/**
 * What every part of the desktop service shares: the desktop as its caller may manage it, the
 * checks of a body's references, name, hardware and card, and removing a desktop for good.
 */
import type { FastifyInstance } from 'fastify';
import type { DesktopRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { assertDesktopAccess, canManageDesktop } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { DesktopHardware, ImageUpload } from '../../../../src/generated/types.ts';
import { prepareCardImage, releaseCardImages, type PreparedCard } from './card-images.ts';
import { createReferenceCheck } from './desktop-references.ts';
import { checkViewers } from './desktop-rules.ts';
import { appliedQuota, assertHardwareWithin, hardwareLimits } from '../quotas/index.ts';
import type { OwnedDesktopRow } from './desktops-repository.ts';
import { profilesOf } from './desktop-rules.ts';

const subjectOf = (auth: AuthContext) => ({
  userId: auth.userId,
  groupId: auth.groupId,
  categoryId: auth.categoryId,
  role: auth.role,
});

export type DesktopContext = ReturnType<typeof createDesktopContext>;

export function createDesktopContext(app: FastifyInstance) {
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
    await releaseCardImages(app.config.dataDir, app.database.query, [desktop.image]);
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
    app,
    db,
    subjectOf,
    desktopFor,
    assertUsableReferences,
    cardImageOf,
    removeDesktop,
    assertNameFree,
    assertHardwareAllowed,
    bookingsFollowProfile,
  };
}
