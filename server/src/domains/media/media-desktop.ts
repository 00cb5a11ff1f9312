/** A new desktop that installs from a medium. */
import { randomUUID } from 'node:crypto';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import {
  stockImageOf,
  checkViewers,
  NEW_DESKTOP_HARDWARE,
  MEDIA_INSTALLS,
} from '../desktops/index.ts';
import type { IdResponse, MediaDesktopCreate } from '../../../../src/generated/types.ts';
import {
  appliedQuota,
  assertHardwareWithin,
  checkDesktopCreate,
  hardwareLimits,
  lockQuotaScopes,
} from '../quotas/index.ts';
import { NEW_DESKTOP_GUEST, withMediaFirst } from './media-rules.ts';
import type { MediaContext } from './media-context.ts';

/**
 * POST /desktop/from/media: a persistent desktop with an empty disk of the chosen size, the
 * medium attached and booting from it first (unless the body names a boot order), inside the
 * desktop quota; its disk is made in the background and it ends `stopped`.
 */
export async function createDesktopFromMedia(
  ctx: MediaContext,
  auth: AuthContext,
  body: MediaDesktopCreate,
): Promise<IdResponse> {
  const { app, db } = ctx;
  if (body.xml_id !== undefined && !MEDIA_INSTALLS.some((i) => i.id === body.xml_id))
    throw new ApiError(
      'not_found',
      `Unknown installation profile ${body.xml_id}`,
      'not_found',
      { id: body.xml_id },
      { errors: { '/xml_id': 'not_found' } },
    );
  const kind = body.kind ?? 'iso';
  const sent = body.hardware ?? {};
  const hardware = withMediaFirst(
    { ...NEW_DESKTOP_HARDWARE, ...sent, boot_order: sent.boot_order ?? [kind, 'disk'] },
    kind === 'iso' ? 'isos' : 'floppies',
    body.media_id,
  );
  await ctx.assertUsableReferences(auth, { hardware });
  const medium = await app.media.get(body.media_id);
  if (medium?.status !== 'downloaded')
    throw new ApiError(
      'precondition_required',
      'The media has not finished downloading',
      'media_not_downloaded',
      { id: body.media_id },
      { errors: { '/media_id': 'media_not_downloaded' } },
    );
  const guestProperties = body.guest_properties ?? NEW_DESKTOP_GUEST;
  checkViewers({
    viewers: guestProperties.viewers,
    interfaces: hardware.interfaces,
    videos: hardware.videos,
  });
  assertHardwareWithin(
    hardwareLimits(await appliedQuota(app.database.query, ctx.subjectOf(auth))),
    sent,
  );
  const id = randomUUID();
  await db.transaction(async (tx) => {
    const query = queryOn(tx);
    await lockQuotaScopes(query, ctx.subjectOf(auth));
    await checkDesktopCreate(query, ctx.subjectOf(auth), 'desktops');
    if (await app.desktops.nameTaken(auth.userId, body.name, undefined, tx))
      throw new ApiError(
        'conflict',
        'A desktop with this name already exists',
        'new_desktop_name_exists',
        { name: body.name.trim() },
      );
    await app.desktops.table.create(
      {
        id,
        userId: auth.userId,
        categoryId: auth.categoryId,
        groupId: auth.groupId,
        name: body.name.trim(),
        description: body.description ?? '',
        type: 'persistent',
        state: 'creating',
        templateId: null,
        hardware,
        guestProperties,
        image: stockImageOf(id),
      },
      tx,
    );
  });
  await app.desktops.publishCurrent(id, 'desktops.created');
  app.engine.background(app.engine.createDisk(id), 'disk creation failed', id);
  return { id };
}
