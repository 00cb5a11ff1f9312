/** New desktops from a template: persistent ones, and the caller's temporary one. */
import { randomUUID } from 'node:crypto';
import { desktopFromCreate } from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { DesktopCreate } from '../../../../src/generated/types.ts';
import { checkDesktopCreate, checkDesktopStart, lockQuotaScopes } from '../quotas/index.ts';
import { stockImageOf } from './desktops-repository.ts';
import { profilesOf } from './desktop-rules.ts';

import { mergeHardware } from './desktop-hardware.ts';
import type { DesktopContext } from './desktop-context.ts';

/** A persistent desktop from a template: stored `creating`, its disk made in the background. */
export async function createPersistentDesktop(
  ctx: DesktopContext,
  auth: AuthContext,
  body: DesktopCreate,
): Promise<{ id: string }> {
  const { app, db } = ctx;
  const template = await ctx.assertUsableReferences(auth, body);
  if (!template) throw new ApiError('not_found', 'Template not found', 'not_found');
  const guestProperties = body.guest_properties ?? template.guestProperties;
  const hardware = mergeHardware(template.hardware, body.hardware);
  await ctx.assertHardwareAllowed(auth, guestProperties.viewers, hardware, body.hardware);
  const id = randomUUID();
  const sent = await ctx.cardImageOf(body.image);
  try {
    await db.transaction(async (tx) => {
      // Creates counted against the same user, group or category quota wait for each other,
      // so a quota or limit with one unit left admits exactly one desktop.
      const query = queryOn(tx);
      await lockQuotaScopes(query, ctx.subjectOf(auth));
      await checkDesktopCreate(query, ctx.subjectOf(auth), 'desktops');
      await ctx.assertNameFree(auth.userId, body.name, undefined, tx);
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
}

/** The caller's temporary desktop of a template: reused (and started) when it exists. */
export async function createTemporaryDesktop(
  ctx: DesktopContext,
  auth: AuthContext,
  templateId: string,
): Promise<{ id: string }> {
  const { app, db } = ctx;
  const template = await ctx.assertUsableReferences(auth, { template_id: templateId });
  if (!template) throw new ApiError('not_found', 'Template not found', 'not_found');
  // A temporary desktop starts at once: it can not wait for a booking of a GPU profile.
  if (profilesOf(template.hardware).length > 0)
    throw new ApiError(
      'precondition_required',
      'A temporary desktop can not use a reservable profile',
      'temporal_new_reservable',
    );
  await checkDesktopStart(app.database.query, ctx.subjectOf(auth), {
    memory: Number(template.hardware.memory ?? 1),
    vcpus: Number(template.hardware.vcpus ?? 1),
  });
  const existing = await app.desktops.fromTemplate(auth.userId, 'nonpersistent', template.id);
  const [only] = existing;
  if (existing.length === 1 && only) {
    if (only.state !== 'started') await app.engine.start(only.id).catch(() => undefined);
    return { id: only.id };
  }
  for (const d of existing) await ctx.removeDesktop(d, true);
  const id = randomUUID();
  await db.transaction(async (tx) => {
    const query = queryOn(tx);
    await lockQuotaScopes(query, ctx.subjectOf(auth));
    await checkDesktopCreate(query, ctx.subjectOf(auth), 'volatile');
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
}
